// @vitest-environment jsdom
import { fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import { describe, expect, it, vi } from 'vitest';
import { normalizeGoal } from '../../lib/api';
import { BUSY_AGENT } from '../../lib/api/agents.fixture';
import AgentCard from './AgentCard.svelte';

/** The text of the element with that test id. */
const text = (id: string) => screen.getByTestId(id).textContent;

describe('AgentCard', () => {
  it("shows the agent's role, purpose, status, current task with its goal's persona, progress, queue, history and inbox", async () => {
    const onopengoal = vi.fn();
    render(AgentCard, { agent: BUSY_AGENT, goal: undefined, personaName: 'Engineer', onopengoal, onsetrole: vi.fn() });
    const shown = ['pane', 'role', 'purpose', 'status', 'steps', 'queue', 'history', 'unread'].map((f) => text(`agent-${f}`));
    expect(shown).toEqual(['build-term', 'Builder', 'reads every diff', 'working', '3 of 40', '1', '0', '1']);
    expect(text('agent-task')).toContain('release / build');
    expect(text('agent-task')).toContain('Build the release');
    const persona = screen.getByTestId('agent-persona');
    expect([persona.textContent, persona.dataset.persona]).toEqual(['Engineer', 'engineer']);
    expect(text('agent-todos')).toContain('1 of 3');
    expect(text('agent-cost')).toContain('0.25');
    const items = screen.getAllByTestId('agent-inbox-item');
    expect(items[0].textContent).toContain('review notes are in /tmp/notes');
    expect(items[0].dataset.delivered).toBe('false');
    await fireEvent.click(screen.getByTestId('agent-open-goal'));
    expect(onopengoal).toHaveBeenCalledWith('goal-0');
  });

  it('shows the live goal over the listed figures, the persona id when the catalog lacks it, and no task when idle', () => {
    const goal = normalizeGoal({ id: 'goal-0', status: 'running', state: { steps: 11, costUsd: 2, todos: [] } });
    const r = render(AgentCard, { agent: BUSY_AGENT, goal, onopengoal: vi.fn(), onsetrole: vi.fn() });
    expect(text('agent-steps')).toBe('11 of 40');
    expect(text('agent-persona')).toBe('engineer');
    expect(screen.queryByTestId('agent-todos')).toBeNull();
    r.unmount();
    render(AgentCard, {
      agent: { paneId: 'p', role: '', purpose: '', status: 'idle', inbox: [], queue: [], history: [], updatedAt: '' },
      goal: undefined,
      onopengoal: vi.fn(),
      onsetrole: vi.fn(),
    });
    expect(screen.queryByTestId('agent-task')).toBeNull();
    expect(screen.queryByTestId('agent-persona')).toBeNull();
    expect(screen.queryByTestId('agent-inbox')).toBeNull();
    expect(screen.queryByTestId('agent-open-goal')).toBeNull();
  });

  it('edits the role: offers the built-in roles, saves a typed one, shows a refusal and keeps the form', async () => {
    const onsetrole = vi.fn(async (role: string) => {
      if (role === '9 lives') throw new Error('role: "9 lives" is not a role: use Builder, …');
    });
    render(AgentCard, { agent: BUSY_AGENT, goal: undefined, onopengoal: vi.fn(), onsetrole });
    await fireEvent.click(screen.getByTestId('agent-edit-role'));
    const input = screen.getByTestId('agent-role-input') as HTMLInputElement;
    expect(input.value).toBe('Builder');
    const options = [...document.querySelectorAll(`#${input.getAttribute('list')} option`)].map((o) => (o as HTMLOptionElement).value);
    expect(options).toEqual(['Builder', 'Monitor', 'Tester', 'Deployer', 'Reviewer', 'General']);

    await fireEvent.input(input, { target: { value: '9 lives' } });
    await fireEvent.submit(screen.getByTestId('agent-role-form'));
    await waitFor(() => expect(text('agent-role-error')).toContain('role:'));
    expect(input.getAttribute('aria-invalid')).toBe('true');

    await fireEvent.input(input, { target: { value: ' Release captain ' } });
    await fireEvent.input(screen.getByTestId('agent-purpose-input'), { target: { value: 'tags and ships' } });
    await fireEvent.submit(screen.getByTestId('agent-role-form'));
    expect(onsetrole).toHaveBeenLastCalledWith('Release captain', 'tags and ships');
    await waitFor(() => expect(screen.queryByTestId('agent-role-form')).toBeNull());
  });
});

// @vitest-environment jsdom
import { fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import { describe, expect, it, vi } from 'vitest';
import { normalizeAgent, normalizeGoal } from '../../lib/api';
import { RAW_AGENT } from '../../lib/api/agents.fixture';
import AgentCard from './AgentCard.svelte';

describe('AgentCard', () => {
  it("shows the agent's role, purpose, status, current task with its goal's persona, progress, queue, history and inbox", async () => {
    const onopengoal = vi.fn();
    render(AgentCard, { agent: normalizeAgent(RAW_AGENT), goal: undefined, personaName: 'Engineer', onopengoal, onsetrole: vi.fn() });
    expect(screen.getByTestId('agent-pane').textContent).toBe('review-term');
    expect(screen.getByTestId('agent-role').textContent).toBe('Reviewer');
    expect(screen.getByTestId('agent-purpose').textContent).toBe('reads every diff');
    expect(screen.getByTestId('agent-status').textContent).toBe('working');
    expect(screen.getByTestId('agent-task').textContent).toContain('release / review');
    expect(screen.getByTestId('agent-task').textContent).toContain('Review the change');
    const persona = screen.getByTestId('agent-persona');
    expect([persona.textContent, persona.dataset.persona]).toEqual(['Engineer', 'engineer']);
    expect(screen.getByTestId('agent-steps').textContent).toBe('3 of 40');
    expect(screen.getByTestId('agent-todos').textContent).toContain('1 of 3');
    expect(screen.getByTestId('agent-cost').textContent).toContain('0.25');
    expect(screen.getByTestId('agent-queue').textContent).toBe('1');
    expect(screen.getByTestId('agent-history').textContent).toBe('0');
    expect(screen.getByTestId('agent-unread').textContent).toBe('1');
    const items = screen.getAllByTestId('agent-inbox-item');
    expect(items[0].textContent).toContain('dist/ is at /tmp/dist');
    expect(items[0].dataset.delivered).toBe('false');
    await fireEvent.click(screen.getByTestId('agent-open-goal'));
    expect(onopengoal).toHaveBeenCalledWith('goal-r');
  });

  it('shows the live goal over the listed figures, the persona id when the catalog lacks it, and no task when idle', () => {
    const goal = normalizeGoal({ id: 'goal-r', status: 'running', state: { steps: 11, costUsd: 2, todos: [] } });
    const r = render(AgentCard, { agent: normalizeAgent(RAW_AGENT), goal, onopengoal: vi.fn(), onsetrole: vi.fn() });
    expect(screen.getByTestId('agent-steps').textContent).toBe('11 of 40');
    expect(screen.getByTestId('agent-persona').textContent).toBe('engineer');
    expect(screen.queryByTestId('agent-todos')).toBeNull();
    r.unmount();
    render(AgentCard, {
      agent: normalizeAgent({ pane_id: 'p', status: 'idle', inbox: [], queue: [], history: [] }),
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
    render(AgentCard, { agent: normalizeAgent(RAW_AGENT), goal: undefined, onopengoal: vi.fn(), onsetrole });
    await fireEvent.click(screen.getByTestId('agent-edit-role'));
    const input = screen.getByTestId('agent-role-input') as HTMLInputElement;
    expect(input.value).toBe('Reviewer');
    const options = [...document.querySelectorAll(`#${input.getAttribute('list')} option`)].map((o) => (o as HTMLOptionElement).value);
    expect(options).toEqual(['Builder', 'Monitor', 'Tester', 'Deployer', 'Reviewer', 'General']);

    await fireEvent.input(input, { target: { value: '9 lives' } });
    await fireEvent.submit(screen.getByTestId('agent-role-form'));
    await waitFor(() => expect(screen.getByTestId('agent-role-error').textContent).toContain('role:'));
    expect(input.getAttribute('aria-invalid')).toBe('true');

    await fireEvent.input(input, { target: { value: ' Release captain ' } });
    await fireEvent.input(screen.getByTestId('agent-purpose-input'), { target: { value: 'tags and ships' } });
    await fireEvent.submit(screen.getByTestId('agent-role-form'));
    expect(onsetrole).toHaveBeenLastCalledWith('Release captain', 'tags and ships');
    await waitFor(() => expect(screen.queryByTestId('agent-role-form')).toBeNull());
  });
});

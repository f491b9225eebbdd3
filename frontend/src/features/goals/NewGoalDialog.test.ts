// @vitest-environment jsdom
import { fireEvent, render, screen } from '@testing-library/svelte';
import { describe, expect, it, vi } from 'vitest';
import type { Backend, Goal, GoalsApi, Workspace } from '../../lib/api';
import { BackendError, normalizeGoal } from '../../lib/api';
import { createAppContext } from '../../lib/state/context';
import Harness from './GoalsHarness.test.svelte';
import NewGoalDialog from './NewGoalDialog.svelte';

const ws = {
  id: 'w1',
  name: 'Workspace 1',
  panes: [
    { id: 'p1', kind: 'terminal', label: 'Terminal 1', row: 0, col: 0 },
    { id: 'b1', kind: 'browser', label: 'Docs', row: 0, col: 1 },
  ],
} as unknown as Workspace;

function setup(start: GoalsApi['start']) {
  const goals = { start: vi.fn(start), tools: vi.fn(async () => []) } as unknown as GoalsApi;
  const backend = {
    kind: 'web',
    goals,
    listProviders: vi.fn(async () => ({ providers: [], defaultId: '', criticDefaultId: '', secretsBackend: 'keyring' })),
    subscribe: () => () => {},
  } as unknown as Backend;
  const ctx = createAppContext(backend);
  ctx.workspaces.applySnapshot({ workspaces: [ws], activeId: 'w1' });
  const onstarted = vi.fn();
  render(Harness, { ctx, component: NewGoalDialog, with: { initialPaneId: '', onclose: () => {}, onstarted } });
  return { goals, onstarted };
}

const errorOf = (field: string) => document.querySelector(`[data-testid=field-error][data-field="${field}"]`)?.textContent ?? '';
const type = (testid: string, value: string) => fireEvent.input(screen.getByTestId(testid), { target: { value } });

describe('NewGoalDialog', () => {
  it('names each empty required field and sends nothing', async () => {
    const { goals } = setup(async () => normalizeGoal({}));
    expect([...(screen.getByTestId('goal-pane-select') as HTMLSelectElement).options].map((o) => o.textContent)).toEqual([
      'Pick the pane the goal works in…',
      'Workspace 1 / Terminal 1 (p1)',
      'Workspace 1 / Docs (b1)',
    ]);
    await fireEvent.click(screen.getByTestId('goal-start'));
    expect(errorOf('goal')).toContain('what the goal should achieve');
    expect(errorOf('paneId')).toContain('Pick the pane');
    expect(errorOf('criterion.command')).toContain('shell command');
    await type('goal-text-input', 'Ship it');
    expect(errorOf('goal')).toBe(''); // typing takes the message back
    expect(goals.start).not.toHaveBeenCalled();
  });

  it("sends the chosen criterion's fields only, and puts a refusal next to the field it names", async () => {
    const { goals, onstarted } = setup(async () => {
      throw new BackendError('policy.sandboxDir: "/nope" does not exist: create it or pick another', { status: 400, field: 'policy.sandboxDir' });
    });
    await type('goal-text-input', 'Ship it');
    await fireEvent.change(screen.getByTestId('goal-pane-select'), { target: { value: 'p1' } });
    await type('goal-check-command', 'make ship');
    await fireEvent.click(screen.getByRole('tab', { name: 'Visual' }));
    await type('goal-check-visual-question', 'Shipped?');
    await fireEvent.click(screen.getByRole('tab', { name: 'Shell' }));
    await type('goal-sandbox', '/nope');
    await fireEvent.click(screen.getByTestId('goal-start'));
    await vi.waitFor(() => expect(errorOf('policy.sandboxDir')).toBe('"/nope" does not exist: create it or pick another'));
    expect(goals.start).toHaveBeenCalledWith({
      paneId: 'p1',
      goal: 'Ship it',
      criterion: { kind: 'shell', command: 'make ship' },
      policy: { risk: 'write_local', sandboxDir: '/nope' },
      settings: {},
    });
    expect(onstarted).not.toHaveBeenCalled();
  });

  it('shows a refusal that names no field at the top, and reports a start', async () => {
    let fail = true;
    const { onstarted } = setup(async () => {
      if (fail) throw new BackendError('criterion: the judge model cannot be reached', { status: 400, field: 'criterion' });
      return normalizeGoal({ id: 'g9' }) as Goal;
    });
    await type('goal-text-input', 'Ship it');
    await fireEvent.change(screen.getByTestId('goal-pane-select'), { target: { value: 'p1' } });
    await fireEvent.click(screen.getByRole('tab', { name: 'Manual' }));
    expect(screen.getByTestId('criterion-manual-warning').textContent).toContain('re-open the goal');
    await fireEvent.click(screen.getByTestId('goal-start'));
    await vi.waitFor(() => expect(screen.getByTestId('goal-form-error').textContent).toContain('judge model cannot be reached'));
    fail = false;
    await fireEvent.click(screen.getByTestId('goal-start'));
    await vi.waitFor(() => expect(onstarted).toHaveBeenCalledWith('g9'));
  });

  it('asks for its own worktree when the box is ticked, and puts a refusal of it under the box', async () => {
    let fail = true;
    const { goals, onstarted } = setup(async () => {
      if (fail) throw new BackendError('worktree: /home/me is not in a git repository with a commit, so the goal has no branch to work on: git init it and commit once, or drop --worktree', { status: 400, field: 'worktree' });
      return normalizeGoal({ id: 'g7' }) as Goal;
    });
    await type('goal-text-input', 'Ship it');
    await fireEvent.change(screen.getByTestId('goal-pane-select'), { target: { value: 'p1' } });
    await type('goal-check-command', 'make ship');
    await type('goal-sandbox', '/home/me');
    const box = screen.getByRole('checkbox', { name: 'Own git worktree and branch' }) as HTMLInputElement;
    expect(box.checked).toBe(false);
    expect(box.getAttribute('aria-describedby')).toBe('ng-worktree-hint');
    expect(document.getElementById('ng-worktree-hint')?.textContent).toContain('your checkout is left as it is');
    await fireEvent.click(box);
    await fireEvent.click(screen.getByTestId('goal-start'));
    await vi.waitFor(() => expect(errorOf('worktree')).toContain('git init it and commit once'));
    expect(goals.start).toHaveBeenCalledWith(
      { paneId: 'p1', goal: 'Ship it', criterion: { kind: 'shell', command: 'make ship' }, policy: { risk: 'write_local', sandboxDir: '/home/me' }, settings: {} },
      { worktree: true },
    );
    fail = false;
    await fireEvent.click(screen.getByTestId('goal-start'));
    await vi.waitFor(() => expect(onstarted).toHaveBeenCalledWith('g7'));
    expect(goals.start).toHaveBeenLastCalledWith(expect.objectContaining({ goal: 'Ship it' }), { worktree: true });
  });
});

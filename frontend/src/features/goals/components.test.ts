// @vitest-environment jsdom
import { fireEvent, render, screen } from '@testing-library/svelte';
import { describe, expect, it, vi } from 'vitest';
import type { Backend, Goal, GoalApproval, GoalStep, GoalsApi } from '../../lib/api';
import { normalizeGoal } from '../../lib/api';
import { createAppContext } from '../../lib/state/context';
import { GoalTimeline } from '../../lib/state/goalTimeline.svelte';
import ApprovalModal from './ApprovalModal.svelte';
import GoalBudget from './GoalBudget.svelte';
import Harness from './GoalsHarness.test.svelte';
import StepLog from './StepLog.svelte';

const PNG = 'data:image/png;base64,iVBORw0KGgo=';

function step(index: number, over: Partial<GoalStep> = {}): GoalStep {
  return { goalId: 'g1', index, callId: `c${index}`, tool: 'write_to_terminal', args: { text: `cmd ${index}` }, result: `result ${index}`, isError: false, startedAt: '2025-01-01T00:00:05Z', durationMs: 12, images: 0, ...over };
}

function approval(id: string, goalId: string, tool: string): GoalApproval {
  return { id, goalId, callId: id, tool, args: { url: 'https://example.com' }, risk: 'network_get', reason: `${tool} is above the ceiling`, status: 'pending', createdAt: '' };
}

function setup(goals: Partial<GoalsApi>) {
  const backend = { kind: 'web', goals: goals as GoalsApi, subscribe: () => () => {} } as unknown as Backend;
  return createAppContext(backend);
}

describe('StepLog', () => {
  it('shows each step with its family, outcome and preview; expands to arguments and result; shows screenshots', async () => {
    const stepImage = vi.fn(async () => PNG);
    const api = {
      events: vi.fn(async () => []),
      steps: vi.fn(async () => [step(1), step(2, { tool: 'browser_screenshot', isError: true, images: 1, result: 'saved shot.png' })]),
      stepImage,
    };
    const ctx = setup(api);
    const timeline = new GoalTimeline(api as unknown as GoalsApi, 'g1');
    await timeline.catchUp();
    const goal = normalizeGoal({ id: 'g1', status: 'running', startedAt: '2025-01-01T00:00:00Z' });
    render(Harness, { ctx, component: StepLog, with: { goal, timeline } });

    const rows = screen.getAllByTestId('step');
    expect(rows.map((r) => [r.dataset.index, r.dataset.family, r.dataset.error])).toEqual([
      ['1', 'terminal', 'false'],
      ['2', 'browser', 'true'],
    ]);
    expect(rows.map((r) => r.querySelector('[data-testid=step-outcome]')?.textContent)).toEqual(['OK', 'ERR']);
    expect(rows[0].textContent).toContain('+5.0 s');
    expect(screen.queryByTestId('step-args')).toBeNull();
    await fireEvent.click(rows[0].querySelector('button')!);
    expect(screen.getByTestId('step-args').textContent).toContain('"text": "cmd 1"');
    expect(screen.getByTestId('step-result').textContent).toBe('result 1');

    await vi.waitFor(() => expect(screen.getByTestId('step-thumb').querySelector('img')?.getAttribute('src')).toBe(PNG));
    expect(stepImage).toHaveBeenCalledWith('g1', 2, 0);
    await fireEvent.click(screen.getByTestId('step-thumb'));
    expect(screen.getByTestId('step-image-full').querySelector('img')?.getAttribute('src')).toBe(PNG);
  });
});

describe('ApprovalModal', () => {
  it('asks one request at a time, says how many wait, puts one off, and sends a denial with its reason', async () => {
    const answerApproval = vi.fn(async () => ({}) as GoalApproval);
    const ctx = setup({
      list: vi.fn(async () => [normalizeGoal({ id: 'g1', status: 'awaiting_approval', spec: { goal: 'Publish the report' } })]),
      pendingApprovals: vi.fn(async () => [approval('a1', 'g1', 'browser_navigate'), approval('a2', 'g1', 'browser_click')]),
      get: vi.fn(() => new Promise<Goal>(() => {})),
      answerApproval,
    });
    await ctx.goals.load();
    render(Harness, { ctx, component: ApprovalModal });

    expect(screen.getByTestId('approval-count').textContent).toBe('1 of 2');
    expect(screen.getByTestId('approval-tool').textContent).toBe('browser_navigate');
    expect(screen.getByTestId('approval-card').textContent).toContain('Publish the report');
    await fireEvent.click(screen.getByTestId('approval-later'));
    expect(screen.getByTestId('approval-tool').textContent).toBe('browser_click');
    expect(screen.getByTestId('approval-count').textContent).toBe('1 of 1');

    await fireEvent.input(screen.getByTestId('approval-deny-reason'), { target: { value: 'not that page' } });
    await fireEvent.click(screen.getByTestId('approval-deny'));
    await vi.waitFor(() => expect(answerApproval).toHaveBeenCalledWith('a2', 'deny', 'not that page'));
    await vi.waitFor(() => expect(screen.queryByTestId('approval-modal')).toBeNull()); // a1 is put off

    ctx.goals.recall('g1'); // opening the goal asks again
    await vi.waitFor(() => expect(screen.getByTestId('approval-tool').textContent).toBe('browser_navigate'));
  });
});

describe('GoalBudget', () => {
  it('shows use against the budget, and raises the budget of a goal held for it', async () => {
    const raiseBudget = vi.fn(async () => {});
    const ctx = setup({ raiseBudget, get: vi.fn(() => new Promise<Goal>(() => {})), events: vi.fn(async () => []), steps: vi.fn(async () => []) });
    const goal = normalizeGoal({
      id: 'g1',
      status: 'budget_exceeded',
      spec: { settings: { budgetUsd: 2, budgetTokens: 50000 } },
      state: { usage: { inputTokens: 40000, outputTokens: 12000 }, costUsd: 2.04 },
    });
    render(Harness, { ctx, component: GoalBudget, with: { goal } });
    expect(screen.getByTestId('goal-tokens').textContent).toBe('52k of 50k');
    expect(screen.getByTestId('goal-cost').textContent).toBe('$2.04 of $2.00');
    await fireEvent.click(screen.getByTestId('goal-raise'));
    expect(screen.getByTestId('goal-raise-error').textContent).toContain('Enter a new budget');
    expect(raiseBudget).not.toHaveBeenCalled();
    await fireEvent.input(screen.getByTestId('goal-raise-usd'), { target: { value: '5' } });
    await fireEvent.click(screen.getByTestId('goal-raise'));
    await vi.waitFor(() => expect(raiseBudget).toHaveBeenCalledWith('g1', 5, 0));
  });

  it('offers no raise form to a goal within its budget', () => {
    const ctx = setup({});
    render(Harness, { ctx, component: GoalBudget, with: { goal: normalizeGoal({ id: 'g1', status: 'running' }) } });
    expect(screen.queryByTestId('goal-raise-form')).toBeNull();
    expect(screen.getByTestId('goal-cost').textContent).toBe('$0 (no cap)');
  });
});

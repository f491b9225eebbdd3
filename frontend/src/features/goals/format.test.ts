import { describe, expect, it } from 'vitest';
import type { Goal, GoalEvent, Workspace } from '../../lib/api';
import { normalizeGoal } from '../../lib/api';
import {
  elapsedNow,
  savedAt,
  inputSplit,
  currentActivity,
  describeCriterion,
  filterGoals,
  formatMs,
  offsetText,
  paneLabel,
  railEntries,
  relativeTime,
  toolFamily,
  usd,
} from './format';

const g = (id: string, status: Goal['status'], updatedAt: string) => normalizeGoal({ id, status, updatedAt });

describe('filters', () => {
  const goals = [
    g('done', 'completed', '2025-01-01T00:00:05Z'),
    g('run', 'running', '2025-01-01T00:00:01Z'),
    g('wait', 'awaiting_approval', '2025-01-01T00:00:09Z'),
    g('int', 'interrupted', '2025-01-01T00:00:03Z'),
    g('over', 'budget_exceeded', '2025-01-01T00:00:02Z'),
    g('fail', 'failed', '2025-01-01T00:00:07Z'),
    g('ab', 'aborted', '2025-01-01T00:00:04Z'),
    g('pend', 'pending', '2025-01-01T00:00:06Z'),
    g('pause', 'paused', '2025-01-01T00:00:08Z'),
  ];
  it('sorts by newest activity and splits active from finished', () => {
    expect(filterGoals(goals, 'all').map((x) => x.id)).toEqual(['wait', 'pause', 'fail', 'pend', 'done', 'ab', 'int', 'over', 'run']);
    expect(filterGoals(goals, 'active').map((x) => x.id)).toEqual(['wait', 'pause', 'pend', 'int', 'over', 'run']);
    expect(filterGoals(goals, 'finished').map((x) => x.id)).toEqual(['fail', 'done', 'ab']);
  });
});

describe('describeCriterion', () => {
  it('says each kind in words', () => {
    expect(describeCriterion({ kind: 'shell', command: 'test -f done.txt' })).toBe('the shell command `test -f done.txt` exits with code 0');
    expect(describeCriterion({ kind: 'shell', command: 'make test', exitCode: 2, timeout: '1h0m0s' })).toBe(
      'the shell command `make test` exits with code 2 (timeout 1h)',
    );
    expect(describeCriterion({ kind: 'model_question', question: 'Done?' })).toBe('a judge model answers YES to: "Done?"');
    expect(describeCriterion({ kind: 'model_question', question: 'Done?', threshold: 'high_confidence' })).toMatch(/^two independent judge models/);
    expect(describeCriterion({ kind: 'json_predicate', expr: 'ok == true' })).toBe(
      "the expression `ok == true` is true of the claim's rationale, which must be a JSON document",
    );
    expect(describeCriterion({ kind: 'json_predicate', expr: 'n > 1', source: 'file:out.json' })).toBe('the expression `n > 1` is true of the JSON in the file out.json');
    expect(describeCriterion({ kind: 'json_predicate', expr: 'n > 1', source: 'command:./report' })).toBe(
      'the expression `n > 1` is true of the JSON printed by the command `./report`',
    );
    expect(describeCriterion({ kind: 'visual', question: 'Logged in?', paneId: 'b1' }, (id) => `WS / ${id}`)).toBe(
      'a vision model looking at pane WS / b1 answers YES to: "Logged in?"',
    );
    expect(describeCriterion({ kind: 'manual' })).toMatch(/re-open the goal with feedback/);
  });
});

describe('times, amounts, names', () => {
  const now = Date.parse('2025-01-01T01:00:00Z');
  it('says how long ago', () => {
    expect(relativeTime('2025-01-01T00:59:58Z', now)).toBe('just now');
    expect(relativeTime('2025-01-01T00:59:18Z', now)).toBe('42s ago');
    expect(relativeTime('2025-01-01T00:55:00Z', now)).toBe('5m ago');
    expect(relativeTime('2024-12-31T22:00:00Z', now)).toBe('3h ago');
    expect(relativeTime('2024-12-30T01:00:00Z', now)).toBe('2d ago');
    expect(relativeTime('', now)).toBe('');
  });

  it('formats spans, offsets and money', () => {
    expect(formatMs(850)).toBe('850 ms');
    expect(formatMs(12_340)).toBe('12.3 s');
    expect(formatMs(125_000)).toBe('2m 05s');
    expect(formatMs(3_720_000)).toBe('1h 02m');
    expect(offsetText('2025-01-01T00:00:00Z', '2025-01-01T00:01:05Z')).toBe('+1m 05s');
    expect(usd(0)).toBe('$0');
    expect(usd(0.0042)).toBe('$0.0042');
    expect(usd(1.5)).toBe('$1.50');
  });

  it('sorts tools into families', () => {
    expect(['write_to_terminal', 'read_terminal_output', 'poll_terminal_status', 'wait_for_output', 'terminal_run'].map(toolFamily)).toEqual([
      'terminal',
      'terminal',
      'terminal',
      'terminal',
      'terminal',
    ]);
    expect(toolFamily('browser_navigate')).toBe('browser');
    expect(toolFamily('claim_complete')).toBe('goal');
    expect(toolFamily('write_todos')).toBe('goal');
    expect(toolFamily('teleport')).toBe('other');
  });

  it('labels panes by workspace, and says what a goal is doing', () => {
    const ws = [{ id: 'w', name: 'Workspace 1', panes: [{ id: 'p1', label: 'Terminal 1' }] }] as unknown as Workspace[];
    expect(paneLabel(ws, 'p1')).toBe('Workspace 1 / Terminal 1');
    expect(paneLabel(ws, 'gone')).toBe('gone');
    expect(currentActivity('running', { tool: 'write_to_terminal', preview: 'Sent 12 characters + Enter', isError: false } as never)).toBe(
      'write_to_terminal Sent 12 characters + Enter',
    );
    expect(currentActivity('awaiting_approval', undefined)).toBe('waiting for your approval');
  });
});

describe('rail entries', () => {
  const e = (seq: number, type: string, data: Record<string, unknown> = {}): GoalEvent => ({ goalId: 'a', seq, type, data, at: '' });
  it('colours critic verdicts and shows verification, approvals, steering; skips steps', () => {
    const rail = railEntries([
      e(1, 'started', { model: 'scripted' }),
      e(2, 'step', { index: 1 }),
      e(3, 'critic', { verdict: 'PROGRESSING', reason: 'files appear' }),
      e(4, 'critic', { verdict: 'STUCK', reason: 'same command' }),
      e(5, 'critic', { verdict: 'ACHIEVED', reason: 'done' }),
      e(6, 'critic', { verdict: 'MISLED', reason: 'off topic' }),
      e(7, 'verification_failed', { gate: 'criterion', detail: 'Shell exited 1, wanted 0', bounces: 1, budget: 5 }),
      e(8, 'approval_resolved', { tool: 'browser_navigate', status: 'deny', answerReason: 'no web' }),
      e(9, 'steered', { text: 'use make' }),
      e(10, 'guard', { action: 'block', rule: 'repeat', message: 'you already tried that' }),
      e(11, 'verification_passed', { detail: 'Shell exited 0, as wanted.' }),
      e(12, 'delta', { text: 'x' }),
    ]);
    expect(rail.map((r) => [r.type, r.tone])).toEqual([
      ['started', 'info'],
      ['critic', 'progressing'],
      ['critic', 'stuck'],
      ['critic', 'achieved'],
      ['critic', 'misled'],
      ['verification_failed', 'fail'],
      ['approval_resolved', 'fail'],
      ['steered', 'info'],
      ['guard', 'warn'],
      ['verification_passed', 'ok'],
    ]);
    expect(rail[1]).toMatchObject({ title: 'critic: PROGRESSING', detail: 'files appear' });
    expect(rail[5]).toMatchObject({ title: 'verification failed (1/5)', detail: 'Shell exited 1, wanted 0' });
    expect(rail[6]).toMatchObject({ title: 'denied: browser_navigate', detail: 'no web' });
    expect(rail[7].detail).toBe('use make');
  });
});

describe('inputSplit', () => {
  it('splits a turn’s input into what the prompt cache served and what it did not', () => {
    expect(inputSplit({ inputTokens: 12_000, outputTokens: 40, cachedInputTokens: 11_000 })).toBe('in 1.0k uncached + 11k cached · out 40');
    expect(inputSplit({ inputTokens: 5_000, outputTokens: 10, cachedInputTokens: 3_000, cacheWriteTokens: 1_500 })).toBe(
      'in 500 uncached + 3.0k cached + 1.5k written to cache · out 10',
    );
    expect(inputSplit({ inputTokens: 800, outputTokens: 5 })).toBe('in 800 uncached · out 5');
  });
});

describe('compaction on the rail', () => {
  it('shows a compaction with its count and sizes', () => {
    const e = { goalId: 'g', seq: 9, type: 'compaction', at: '2026-01-01T00:00:00Z', data: { count: 2, tokensBefore: 5100, tokensAfter: 2300 } } as GoalEvent;
    expect(railEntries([e])).toMatchObject([
      { type: 'compaction', tone: 'info', title: 'context compacted (2)', detail: "older steps summarised to fit the model's window: about 5.1k → 2.3k tokens" },
    ]);
  });
});

describe('namePanes and stepPane', () => {
  it('names panes by their titles, leaving unknown ids and other text alone', async () => {
    const { namePanes, stepPane } = await import('./format');
    const names = new Map([['pane-0123456789ab', 'Terminal 2.1']]);
    expect(namePanes('Sent 5 characters + Enter to pane-0123456789ab.', names)).toBe('Sent 5 characters + Enter to Terminal 2.1.');
    expect(namePanes('pane-ffffffffffff and pane-0123456789abc', names)).toBe('pane-ffffffffffff and pane-0123456789abc');
    expect(stepPane('{"pane_id":"pane-0123456789ab","text":"ls"}')).toBe('pane-0123456789ab');
    expect(stepPane({ url: 'x' })).toBe('');
    expect(stepPane('not json')).toBe('');
  });
});

describe('elapsedNow', () => {
  const goal = (status: Goal['status'], elapsedMs: number, startedAt?: string) => ({ status, startedAt, state: { elapsedMs } as Goal['state'] });

  it('counts on from the saved figure while the goal runs', () => {
    expect(elapsedNow(goal('running', 4000), 10_000, 12_500)).toBe(6500);
  });

  it('counts a first run not yet saved from its start', () => {
    const start = new Date(50_000).toISOString();
    expect(elapsedNow(goal('running', 0, start), 59_000, 59_000)).toBe(9000);
  });

  it('stands still when the goal does not run', () => {
    expect(elapsedNow(goal('paused', 4000), 10_000, 90_000)).toBe(4000);
    expect(elapsedNow(goal('completed', 4000, new Date(0).toISOString()), 10_000, 90_000)).toBe(4000);
  });

  it('takes the save time from updatedAt unless it is missing, old or ahead', () => {
    const now = Date.parse('2026-01-01T12:00:00Z');
    expect(savedAt('2026-01-01T11:59:50Z', now)).toBe(now - 10_000);
    expect(savedAt('2026-01-01T12:00:30Z', now)).toBe(now);
    expect(savedAt('2025-12-31T00:00:00Z', now)).toBe(now);
    expect(savedAt('', now)).toBe(now);
  });
});

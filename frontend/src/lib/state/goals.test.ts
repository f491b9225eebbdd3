import { describe, expect, it, vi } from 'vitest';
import type { Backend, BackendEvent, Goal, GoalApproval, GoalEvent, GoalStep, GoalsApi } from '../api';
import { normalizeGoal } from '../api';
import { GoalStore } from './goals.svelte';
import { fakeLive } from './live.fixture';

const at = (s: number) => new Date(Date.UTC(2025, 0, 1, 0, 0, s)).toISOString();

function goal(id: string, over: Partial<Goal> = {}, paneId = 'p1'): Goal {
  const g = normalizeGoal({ id, status: 'running', spec: { paneId, goal: `goal ${id}`, criterion: { kind: 'manual' } }, updatedAt: at(0) });
  return { ...g, ...over };
}

function ev(goalId: string, seq: number, type: string, data: Record<string, unknown> = {}, s = seq): BackendEvent {
  const e: GoalEvent = { goalId, seq, type, data, at: at(s) };
  return { topic: 'goals', type, data: e };
}

function step(goalId: string, index: number, over: Partial<GoalStep> = {}): GoalStep {
  return { goalId, index, callId: `c${index}`, tool: 'write_to_terminal', args: {}, result: `full result ${index}`, isError: false, startedAt: at(index), durationMs: 5, images: 0, ...over };
}

function approval(id: string, goalId: string): GoalApproval {
  return { id, goalId, callId: 'c', tool: 'browser_navigate', args: { url: 'https://example.com' }, risk: 'network_get', reason: 'above the ceiling', status: 'pending', createdAt: at(1) };
}

function setup(over: Partial<GoalsApi> = {}) {
  const live = fakeLive();
  const goals = {
    list: vi.fn(async () => [goal('a', { updatedAt: at(1) }), goal('b', { status: 'completed', updatedAt: at(5) })]),
    pendingApprovals: vi.fn(async () => [] as GoalApproval[]),
    get: vi.fn(async (id: string) => goal(id, { updatedAt: at(2) })),
    steps: vi.fn(async () => [] as GoalStep[]),
    events: vi.fn(async () => [] as GoalEvent[]),
    start: vi.fn(async () => goal('new', { status: 'pending', updatedAt: at(9) })),
    pause: vi.fn(async () => {}),
    steer: vi.fn(async () => {}),
    remove: vi.fn(async () => {}),
    prune: vi.fn(async () => 1),
    answerApproval: vi.fn(async () => ({}) as GoalApproval),
    ...over,
  } as unknown as GoalsApi;
  const backend = {
    kind: 'web',
    goals,
    ...live.backend,
  } as unknown as Backend;
  const notify = vi.fn();
  const store = new GoalStore(backend, () => {}, notify);
  store.refreshDelayMs = 0;
  store.sync();
  return { store, goals, notify, emit: live.emit, setConn: live.setConn };
}

const ids = (gs: Goal[]) => gs.map((g) => g.id);

describe('GoalStore list', () => {
  it('lists goals newest activity first and counts the running ones', async () => {
    const { store } = setup();
    await store.load();
    expect(ids(store.goals)).toEqual(['b', 'a']);
    expect(store.runningCount).toBe(1);
  });

  it('folds events into the goal at once: status, steps, critic, todos, end and report', async () => {
    const { store, emit } = setup({ get: vi.fn(() => new Promise<Goal>(() => {})) }); // reads never answer
    await store.load();
    emit(ev('a', 1, 'step', { index: 1, tool: 'write_to_terminal', preview: 'typed ls', isError: false }, 10));
    expect(store.byId('a')?.state.steps).toBe(1);
    expect(ids(store.goals)[0]).toBe('a'); // newest activity now
    expect(store.lastSteps.a).toEqual({ tool: 'write_to_terminal', preview: 'typed ls', isError: false });
    emit(ev('a', 2, 'paused', {}, 11));
    expect(store.byId('a')?.status).toBe('paused');
    expect(store.runningCount).toBe(0);
    emit(ev('a', 3, 'resumed', {}, 12));
    emit(ev('a', 4, 'critic', { verdict: 'STUCK', reason: 'loops' }, 13));
    emit(ev('a', 5, 'notice', { todos: [{ text: 'one', done: false }], active: 0 }, 14));
    emit(ev('a', 6, 'verification_failed', { detail: 'Shell exited 1', bounces: 1, budget: 5 }, 15));
    expect(store.byId('a')?.state).toMatchObject({ lastCritic: 'STUCK', bounces: 1, todos: [{ text: 'one', done: false }] });
    emit(ev('a', 7, 'ended', { status: 'completed', report: 'all done' }, 16));
    expect(store.byId('a')).toMatchObject({ status: 'completed', report: 'all done', endedAt: at(16) });
    expect(store.activeForPane('p1')).toBeUndefined();
  });

  it('shows a goal started elsewhere and fills it in from the backend', async () => {
    const { store, emit, goals } = setup();
    await store.load();
    emit(ev('c', 1, 'status', { status: 'pending' }, 20));
    expect(store.byId('c')?.status).toBe('pending');
    await vi.waitFor(() => expect(goals.get).toHaveBeenCalledWith('c'));
    await vi.waitFor(() => expect(store.byId('c')?.spec.goal).toBe('goal c'));
  });

  it('does not let a read that raced an event take the goal back in time', async () => {
    let answer: (g: Goal) => void = () => {};
    const get = vi.fn(() => new Promise<Goal>((r) => (answer = r)));
    const { store, emit } = setup({ get });
    await store.load();
    emit(ev('a', 1, 'step', { index: 1, tool: 't', preview: '' }, 10)); // schedules a read of 'a'
    await vi.waitFor(() => expect(get).toHaveBeenCalled());
    emit(ev('a', 2, 'ended', { status: 'failed', report: 'gave up' }, 11)); // arrives while the read is out
    answer(goal('a', { status: 'running', updatedAt: at(10) })); // the read saw the state before it
    await vi.waitFor(() => expect(store.byId('a')?.status).toBe('failed'));
    expect(store.byId('a')?.report).toBe('gave up');
  });

  it('reads everything again when the connection comes back', async () => {
    const { store, goals, setConn } = setup();
    setConn('connected');
    await vi.waitFor(() => expect(store.loaded).toBe(true));
    (goals.list as ReturnType<typeof vi.fn>).mockResolvedValue([goal('z', { status: 'paused' })]);
    setConn('disconnected');
    setConn('connected');
    await vi.waitFor(() => expect(ids(store.goals)).toEqual(['z']));
    expect(goals.list).toHaveBeenCalledTimes(2);
    expect(goals.pendingApprovals).toHaveBeenCalledTimes(2);
  });

  it('starts a goal and keeps events that beat the answer', async () => {
    let answer: (g: Goal) => void = () => {};
    const { store, emit } = setup({ start: vi.fn(() => new Promise<Goal>((r) => (answer = r))) });
    await store.load();
    const started = store.start(goal('new').spec);
    emit(ev('new', 1, 'status', { status: 'pending' }, 30));
    emit(ev('new', 2, 'started', {}, 31));
    answer(goal('new', { status: 'pending', updatedAt: at(30) }));
    const g = await started;
    expect(g.status).toBe('running');
    expect(store.byId('new')?.status).toBe('running');
  });

  it('rejects a refused start with the backend error and adds nothing', async () => {
    const refusal = Object.assign(new Error('criterion.command: must not be empty'), { field: 'criterion.command' });
    const { store } = setup({ start: vi.fn(async () => Promise.reject(refusal)) });
    await store.load();
    await expect(store.start(goal('x').spec)).rejects.toBe(refusal);
    expect(ids(store.goals)).toEqual(['b', 'a']);
  });

  it('prunes finished goals and removes one', async () => {
    const { store, goals } = setup();
    await store.load();
    (goals.list as ReturnType<typeof vi.fn>).mockResolvedValue([goal('a')]);
    expect(await store.prune()).toBe(1);
    expect(ids(store.goals)).toEqual(['a']);
    await store.remove('a');
    expect(goals.remove).toHaveBeenCalledWith('a');
    expect(store.goals).toEqual([]);
  });
});

describe('GoalStore approvals and notifications', () => {
  it('queues approvals from the start and from events, and drops answered or withdrawn ones', async () => {
    const { store, emit, notify } = setup({ pendingApprovals: vi.fn(async () => [approval('ap1', 'a')]) });
    await store.load();
    expect(store.approvals.map((a) => a.id)).toEqual(['ap1']);
    emit(ev('b', 1, 'approval_requested', { ...approval('ap2', 'b') }));
    expect(store.approvals.map((a) => a.id)).toEqual(['ap1', 'ap2']);
    expect(store.byId('b')?.status).toBe('awaiting_approval');
    expect(notify).toHaveBeenCalledWith('A goal needs your approval', 'browser_navigate: goal b');
    emit(ev('b', 2, 'approval_resolved', { ...approval('ap2', 'b'), status: 'deny' }));
    expect(store.approvals.map((a) => a.id)).toEqual(['ap1']);
    expect(store.byId('b')?.status).toBe('running');
    emit(ev('a', 1, 'paused')); // a pause withdraws what the goal asked
    expect(store.approvals).toEqual([]);
  });

  it('answers an approval; a failed answer is rejected and the queue read again', async () => {
    const { store, goals } = setup({ pendingApprovals: vi.fn(async () => [approval('ap1', 'a')]) });
    await store.load();
    await store.answerApproval('ap1', 'deny', 'not now');
    expect(goals.answerApproval).toHaveBeenCalledWith('ap1', 'deny', 'not now');
    expect(store.approvals).toEqual([]);
    (goals.answerApproval as ReturnType<typeof vi.fn>).mockRejectedValue(new Error('not waiting'));
    await expect(store.answerApproval('ap1', 'allow_once', '')).rejects.toThrow('not waiting');
    await vi.waitFor(() => expect(goals.pendingApprovals).toHaveBeenCalledTimes(2));
  });

  it('notifies once when a goal ends, not again when the event is folded over a read', async () => {
    let answer: (g: Goal) => void = () => {};
    const get = vi.fn(() => new Promise<Goal>((r) => (answer = r)));
    const { store, emit, notify } = setup({ get });
    await store.load();
    emit(ev('a', 1, 'step', { index: 1, tool: 't', preview: '' }, 10)); // a read of 'a' goes out
    await vi.waitFor(() => expect(get).toHaveBeenCalled());
    emit(ev('a', 2, 'ended', { status: 'completed', report: 'done' }, 11));
    answer(goal('a', { status: 'running', updatedAt: at(10) }));
    await vi.waitFor(() => expect(store.byId('a')?.status).toBe('completed'));
    expect(notify).toHaveBeenCalledTimes(1);
    expect(notify).toHaveBeenCalledWith('Goal completed', 'goal a');
  });
});

describe('GoalTimeline', () => {
  it('reads the stored story, then appends live events and replaces partial steps with stored ones', async () => {
    const stored: GoalEvent[] = [
      { goalId: 'a', seq: 1, type: 'started', data: {}, at: at(1) },
      { goalId: 'a', seq: 2, type: 'critic', data: { verdict: 'PROGRESSING', reason: 'ok' }, at: at(2) },
    ];
    const { store, emit, goals } = setup({
      events: vi.fn(async (_id: string, after: number) => stored.filter((e) => e.seq > after)),
      steps: vi.fn(async (_id: string, after: number) => (after < 1 ? [step('a', 1)] : [])),
    });
    await store.load();
    const t = store.timeline('a');
    await vi.waitFor(() => expect(t.loaded).toBe(true));
    expect(t.events.map((e) => e.type)).toEqual(['started', 'critic']);
    expect(t.steps.map((s) => s.result)).toEqual(['full result 1']);

    emit(ev('a', 3, 'paused'));
    expect(t.events.map((e) => e.seq)).toEqual([1, 2, 3]); // follows on: appended without a read
    expect(goals.events).toHaveBeenCalledTimes(1);

    emit({ topic: 'goals', type: 'delta', data: { goalId: 'a', seq: 0, type: 'delta', data: { text: 'thinking…' }, at: at(4) } });
    expect(t.liveText).toBe('thinking…');

    (goals.steps as ReturnType<typeof vi.fn>).mockImplementation(async (_id: string, after: number) => (after < 2 ? [step('a', 2)] : []));
    stored.push({ goalId: 'a', seq: 3, type: 'paused', data: {}, at: at(3) }, { goalId: 'a', seq: 4, type: 'step', data: { index: 2 }, at: at(5) });
    emit(ev('a', 4, 'step', { index: 2, tool: 'write_to_terminal', preview: 'short', isError: true }, 5));
    expect(t.liveText).toBe('');
    expect(t.steps.at(-1)).toMatchObject({ index: 2, result: 'short', partial: true });
    await vi.waitFor(() => expect(t.steps.at(-1)).toMatchObject({ index: 2, result: 'full result 2' }));
    expect(t.steps.at(-1)?.partial).toBeUndefined();
    expect(t.events.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
  });

  it('fills a gap in the sequence (an event stored but not published) from the store', async () => {
    const stored: GoalEvent[] = [{ goalId: 'a', seq: 1, type: 'started', data: {}, at: at(1) }];
    const { store, emit } = setup({ events: vi.fn(async (_id: string, after: number) => stored.filter((e) => e.seq > after)) });
    const t = store.timeline('a');
    await vi.waitFor(() => expect(t.loaded).toBe(true));
    stored.push({ goalId: 'a', seq: 2, type: 'steered', data: { text: 'use make' }, at: at(2) }, { goalId: 'a', seq: 3, type: 'paused', data: {}, at: at(3) });
    emit(ev('a', 3, 'paused'));
    await vi.waitFor(() => expect(t.events.map((e) => e.type)).toEqual(['started', 'steered', 'paused']));
  });

  it('catches up after a reconnect', async () => {
    const stored: GoalEvent[] = [{ goalId: 'a', seq: 1, type: 'started', data: {}, at: at(1) }];
    const { store, setConn } = setup({ events: vi.fn(async (_id: string, after: number) => stored.filter((e) => e.seq > after)) });
    const t = store.timeline('a');
    await vi.waitFor(() => expect(t.loaded).toBe(true));
    stored.push({ goalId: 'a', seq: 2, type: 'ended', data: { status: 'completed' }, at: at(2) });
    setConn('connected');
    await vi.waitFor(() => expect(t.events.map((e) => e.seq)).toEqual([1, 2]));
  });

  it('control actions read the goal and its story again', async () => {
    const { store, goals } = setup();
    await store.load();
    const t = store.timeline('a');
    await vi.waitFor(() => expect(t.loaded).toBe(true));
    await store.steer('a', 'use make');
    expect(goals.steer).toHaveBeenCalledWith('a', 'use make');
    expect(goals.get).toHaveBeenCalledWith('a');
    expect(goals.events).toHaveBeenCalledTimes(2);
  });
});

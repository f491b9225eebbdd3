import { describe, expect, it, vi } from 'vitest';
import type { Backend, BackendEvent, Fleet, FleetTask, Goal } from '../api';
import { normalizeGoal } from '../api';
import { actionFits, FleetStore, foldFleetEvent, taskProgress } from './fleets.svelte';

function task(id: string, over: Partial<FleetTask> = {}): FleetTask {
  return { id, goal: id, pane: `${id}-term`, criterion: { kind: 'manual' }, seq: 1, status: 'waiting', createdAt: '', ...over };
}

function fleet(over: Partial<Fleet> = {}): Fleet {
  return {
    id: 'fleet-1',
    name: 'pair',
    status: 'running',
    spec: { concurrency: 2, policy: { risk: 'write_local' }, settings: {} },
    tasks: [task('a'), task('b', { dependsOn: ['a'] })],
    createdAt: '',
    updatedAt: '',
    ...over,
  };
}

const ev = (data: Record<string, unknown>): BackendEvent => ({ topic: 'fleets', type: String(data.type), data: { fleetId: 'fleet-1', at: '2026-01-01T00:00:00Z', ...data } });

describe('foldFleetEvent', () => {
  it('moves a task along: started with its goal, blocked with the reason, reset by a retry', () => {
    let f = fleet();
    f = foldFleetEvent(f, ev({ type: 'task', taskId: 'a', status: 'running', goalId: 'goal-a' }).data as never);
    expect(f.tasks[0]).toMatchObject({ status: 'running', goalId: 'goal-a', startedAt: '2026-01-01T00:00:00Z' });
    f = foldFleetEvent(f, { fleetId: 'fleet-1', type: 'task', taskId: 'a', status: 'failed', report: 'no gcc', at: '' });
    f = foldFleetEvent(f, { fleetId: 'fleet-1', type: 'task', taskId: 'b', status: 'blocked', reason: 'task a failed', at: '' });
    expect(f.tasks[1]).toMatchObject({ status: 'blocked', reason: 'task a failed' });
    f = foldFleetEvent(f, { fleetId: 'fleet-1', type: 'task', taskId: 'a', status: 'waiting', at: '' });
    expect(f.tasks[0]).toMatchObject({ status: 'waiting', goalId: undefined, report: undefined });
    f = foldFleetEvent(f, { fleetId: 'fleet-1', type: 'fleet', status: 'failed', at: '' });
    expect(f.status).toBe('failed');
  });

  it("leaves a fleet alone for another fleet's event", () => {
    const f = fleet();
    expect(foldFleetEvent(f, { fleetId: 'other', type: 'fleet', status: 'aborted', at: '' })).toBe(f);
  });
});

describe('a task card', () => {
  it("shows its goal's steps, cost, checklist and what it does now", () => {
    const g = normalizeGoal({
      id: 'g',
      status: 'running',
      state: { steps: 7, costUsd: 0.12, todos: [{ text: 'compile', done: true }, { text: 'link', done: false }] },
    });
    expect(taskProgress(g)).toEqual({ steps: 7, costUsd: 0.12, todos: { done: 1, total: 2 }, current: 'link', goalStatus: 'running' });
    expect(taskProgress(undefined)).toEqual({ steps: 0, costUsd: 0, todos: null, current: '' });
  });

  it('offers only the actions that fit the task', () => {
    const running = task('a', { status: 'running' });
    expect(actionFits('pause', running, 'running')).toBe(true);
    expect(actionFits('pause', running, 'paused')).toBe(false);
    expect(actionFits('resume', running, 'paused')).toBe(true);
    expect(actionFits('retry', running)).toBe(false);
    const blocked = task('b', { status: 'blocked' });
    expect(actionFits('retry', blocked)).toBe(true);
    expect(actionFits('steer', blocked)).toBe(true);
    expect(actionFits('abort', blocked)).toBe(false);
    expect(actionFits('abort', task('c'))).toBe(true);
    expect(actionFits('steer', task('d', { status: 'completed' }))).toBe(false);
  });
});

describe('FleetStore', () => {
  function store(list: Fleet[]) {
    let handler: (e: BackendEvent) => void = () => {};
    const backend = {
      subscribe: (h: (e: BackendEvent) => void) => {
        handler = h;
        return () => {};
      },
      fleets: { list: vi.fn(async () => list), get: vi.fn(async () => list[0]) },
    } as unknown as Backend;
    const s = new FleetStore(backend);
    s.reloadDelayMs = 5;
    return { s, backend, emit: (e: BackendEvent) => handler(e) };
  }

  it('follows events of known fleets, and reads the list again for a fleet made elsewhere', async () => {
    const { s, backend, emit } = store([fleet()]);
    const stop = s.sync();
    await s.load();
    emit(ev({ type: 'task', taskId: 'a', status: 'running', goalId: 'goal-a' }));
    expect(s.byId('fleet-1')?.tasks[0].status).toBe('running');
    emit({ topic: 'goals', type: 'step', data: { fleetId: 'fleet-1' } }); // not ours
    emit({ topic: 'fleets', type: 'fleet', data: { fleetId: 'fleet-new', type: 'fleet', status: 'running' } });
    await vi.waitFor(() => expect(backend.fleets.list).toHaveBeenCalledTimes(2));
    stop();
  });

  it('keeps the goal store in charge of goals: a card reads them from there', () => {
    const g: Goal = normalizeGoal({ id: 'goal-a', status: 'paused' });
    expect(actionFits('resume', task('a', { status: 'running', goalId: 'goal-a' }), g.status)).toBe(true);
  });
});

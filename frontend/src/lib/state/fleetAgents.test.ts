import { describe, expect, it, vi } from 'vitest';
import type { Agent, Backend, BackendEvent } from '../api';
import { normalizeGoal } from '../api';
import { BUSY_AGENT } from '../api/agents.fixture';
import { agentProgress, FleetStore, undelivered } from './fleets.svelte';

const agent = (over: Partial<Agent> = {}): Agent => ({ ...BUSY_AGENT, ...over });

describe("an agent card's figures", () => {
  it("takes the current goal's live progress from the goal store, else the list's", () => {
    const a = agent();
    expect(agentProgress(a, undefined)).toEqual({ steps: 3, maxSteps: 40, todos: { done: 1, total: 3 }, costUsd: 0.25, goalStatus: 'running' });
    const live = normalizeGoal({ id: 'goal-0', status: 'paused', state: { steps: 9, costUsd: 1.5, todos: [{ text: 'a', done: true }] } });
    expect(agentProgress(a, live)).toEqual({ steps: 9, maxSteps: 40, todos: { done: 1, total: 1 }, costUsd: 1.5, goalStatus: 'paused' });
    // Another goal (a stale one of the pane) is not this task's.
    expect(agentProgress(a, normalizeGoal({ id: 'other', state: { steps: 99 } }))?.steps).toBe(3);
    expect(agentProgress(agent({ currentTask: undefined, progress: undefined }), undefined)).toBeNull();
  });

  it('counts the undelivered items of the inbox', () => {
    expect(undelivered(agent())).toBe(1);
    expect(undelivered(agent({ inbox: [] }))).toBe(0);
  });
});

describe('FleetStore agents', () => {
  function store() {
    let handler: (e: BackendEvent) => void = () => {};
    let role = 'Reviewer';
    const backend = {
      subscribe: (h: (e: BackendEvent) => void) => {
        handler = h;
        return () => {};
      },
      fleets: {
        list: vi.fn(async () => []),
        agents: vi.fn(async () => [agent({ role })]),
        setRole: vi.fn(async (paneId: string, r: string, purpose: string) => {
          if (r === '9 lives') throw new Error('role: "9 lives" is not a role');
          role = r;
          return { paneId, role: r, purpose, inbox: [], updatedAt: '' };
        }),
      },
    } as unknown as Backend;
    const s = new FleetStore(backend);
    s.reloadDelayMs = 5;
    return { s, backend, emit: (e: BackendEvent) => handler(e) };
  }

  it('reads the agents again on a burst of fleets events (once), not before the dashboard asked', async () => {
    const { s, backend, emit } = store();
    const stop = s.sync();
    emit({ topic: 'fleets', type: 'agent', data: { type: 'agent', pane: 'build-term' } });
    await new Promise((r) => setTimeout(r, 20));
    expect(backend.fleets.agents).not.toHaveBeenCalled();
    await s.loadAgents();
    expect(s.agentOf('build-term')?.role).toBe('Reviewer');
    emit({ topic: 'fleets', type: 'agent', data: { type: 'agent', pane: 'build-term' } });
    emit({ topic: 'fleets', type: 'task', data: { fleetId: 'f', taskId: 'x', type: 'task', status: 'running' } });
    emit({ topic: 'goals', type: 'step', data: {} });
    await vi.waitFor(() => expect(backend.fleets.agents).toHaveBeenCalledTimes(2));
    await new Promise((r) => setTimeout(r, 20));
    expect(backend.fleets.agents).toHaveBeenCalledTimes(2);
    stop();
  });

  it('sets a role and shows it; a refused one rejects and changes nothing', async () => {
    const { s, backend } = store();
    await s.loadAgents();
    await s.setRole('build-term', 'Deployer', 'ships it');
    expect(backend.fleets.setRole).toHaveBeenCalledWith('build-term', 'Deployer', 'ships it');
    expect(s.agentOf('build-term')?.role).toBe('Deployer');
    await expect(s.setRole('build-term', '9 lives', '')).rejects.toThrow('role:');
    expect(s.agentOf('build-term')?.role).toBe('Deployer');
  });
});

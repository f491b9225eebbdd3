import { describe, expect, it, vi } from 'vitest';
import { BackendError } from './errors';
import { RAW_AGENT } from './agents.fixture';
import { HttpFleets, WailsFleets, type WailsFleetMethods } from './fleets';

describe('backend.fleets agents', () => {
  it('web: reads the agents with their current task, persona, progress, queue and inbox, and PUTs a role', async () => {
    const json = vi.fn(async (method: string) => (method === 'GET' ? { agents: [RAW_AGENT] } : { pane_id: 'review-term', role: 'Tester', purpose: 'p', inbox: null }));
    const api = new HttpFleets(json as never);
    const [a] = await api.agents();
    expect(json).toHaveBeenLastCalledWith('GET', '/api/agents');
    expect(a).toMatchObject({ paneId: 'review-term', role: 'Reviewer', status: 'working', history: [] });
    expect(a.currentTask).toMatchObject({ fleetName: 'release', taskId: 'review', goalId: 'goal-r', persona: 'engineer' });
    expect(a.progress).toMatchObject({ steps: 3, maxSteps: 40, todosDone: 1, todosTotal: 3, costUsd: 0.25 });
    expect(a.queue[0]).toMatchObject({ taskId: 'again', priority: 2 });
    expect(a.inbox.map((i) => i.delivered)).toEqual([false, true]);
    const rec = await api.setRole('review term', 'tester', 'p');
    expect(json).toHaveBeenLastCalledWith('PUT', '/api/agents/review%20term', { role: 'tester', purpose: 'p' });
    expect(rec).toMatchObject({ paneId: 'review-term', role: 'Tester', inbox: [] });
  });

  it('desktop: lists through the binding, and a refused role names its field', async () => {
    const app = {
      ListAgents: async () => [RAW_AGENT],
      SetAgentRole: () => Promise.reject('role: "9 lives" is not a role: use Builder, …'),
    } as unknown as WailsFleetMethods;
    const api = new WailsFleets(app);
    expect((await api.agents())[0].currentTask?.persona).toBe('engineer');
    const err = await api.setRole('review-term', '9 lives', '').catch((e) => e);
    expect(err).toBeInstanceOf(BackendError);
    expect(err.field).toBe('role');
  });
});

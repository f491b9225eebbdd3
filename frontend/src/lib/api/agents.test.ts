// The agents' calls on both transports, over the answer Go really gives (testdata/ListAgents.json
// and SetAgentRole.json, from a running fleet), read camelCased.
import { describe, expect, it } from 'vitest';
import { BackendError } from './errors';
import { desktop, web, type Answers } from './transports.fixture';
import listAgents from './testdata/ListAgents.json';
import setAgentRole from './testdata/SetAgentRole.json';

const golden: Answers = { ListAgents: listAgents, SetAgentRole: setAgentRole };

describe('backend.fleets agents', () => {
  it('reads the agents with their current task, persona, progress, queue and inbox, alike on both doors', async () => {
    for (const { api } of [desktop(golden), web(golden)]) {
      const [a] = await api.fleets.agents();
      expect(a).toMatchObject({ paneId: 'build-term', role: 'Builder', status: 'working', history: [] });
      expect(a.currentTask).toMatchObject({ fleetName: 'release', taskId: 'build', goalId: 'goal-0', persona: 'engineer', status: 'running' });
      expect(a.progress).toMatchObject({ steps: 1, maxSteps: 300, todosDone: 0, todosTotal: 0, costUsd: 0, goalStatus: 'running' });
      expect(a.queue[0]).toMatchObject({ taskId: 'review', priority: 2, status: 'waiting' });
      expect(a.inbox).toEqual([{ from: 'the user', text: 'dist/ is at /tmp/dist', at: '2026-01-01T00:00:00Z', delivered: true }]);
      expect(a.updatedAt).toBe('2026-01-01T00:00:00Z');
    }
  });

  it('sends a role change as the table names it and reads the stored record', async () => {
    const d = desktop(golden);
    const w = web(golden);
    for (const { api } of [d, w]) {
      const rec = await api.fleets.setRole('build term', 'tester', 'runs the suite');
      expect(rec).toMatchObject({ paneId: 'build-term', role: 'Tester', purpose: 'runs the suite', updatedAt: '2026-01-01T00:00:00Z' });
    }
    const sent = [['SetAgentRole', { pane: 'build term', role: 'tester', purpose: 'runs the suite' }]];
    expect(d.sent()).toEqual(sent);
    expect(w.sent()).toEqual(sent);
  });

  it('a refused role names its field, alike on both doors', async () => {
    const body = { error: 'role: "9 lives" is not a role: use Builder, …', field: 'role' };
    for (const api of [desktop(golden, { status: 400, body }).api, web(golden, { status: 400, body }).api]) {
      const err = await api.fleets.setRole('build-term', '9 lives', '').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(BackendError);
      expect((err as BackendError).field).toBe('role');
    }
  });
});

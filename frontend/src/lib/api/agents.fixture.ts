// Test data shared by the agents' API, state and card tests: the agent of a real Go answer
// (testdata/ListAgents.json, written by backend/api's TestGoldenFleetAnswers from a running
// fleet) as the UI reads it, and the same agent later in its task.
import type { Agent } from './agents';
import type * as api from './gen/api';
import listAgents from './testdata/ListAgents.json';

/** The agent exactly as Go answered: its task runs, one more waits, one message delivered. */
export const GOLDEN_AGENT: Agent = (listAgents as unknown as api.AgentsResult).agents[0];

/** The same agent further on: todos ticked, money spent, a message not yet delivered. */
export const BUSY_AGENT: Agent = {
  ...GOLDEN_AGENT,
  purpose: 'reads every diff',
  progress: { ...GOLDEN_AGENT.progress!, steps: 3, maxSteps: 40, todosDone: 1, todosTotal: 3, costUsd: 0.25 },
  inbox: [{ from: 'the agent in pane review-term (goal g1)', text: 'review notes are in /tmp/notes', at: '2026-01-01T00:00:00Z', delivered: false }, ...GOLDEN_AGENT.inbox],
};

// Test data shared by the agents' API, state and card tests.
// One agent as GET /api/agents sends it (the Go JSON of fleet.Agent).
export const RAW_AGENT = {
  pane_id: 'review-term',
  role: 'Reviewer',
  purpose: 'reads every diff',
  status: 'working',
  current_task: { fleet_id: 'fleet-1', fleet_name: 'release', task_id: 'review', goal: 'Review the change', status: 'running', goal_id: 'goal-r', persona: 'engineer' },
  queue: [{ fleet_id: 'fleet-1', task_id: 'again', goal: 'Again', status: 'waiting', priority: 2 }],
  history: null,
  progress: { steps: 3, max_steps: 40, todos_done: 1, todos_total: 3, cost_usd: 0.25, tokens: 900, goal_status: 'running' },
  inbox: [
    { from: 'the agent in pane build-term (goal g1)', text: 'dist/ is at /tmp/dist', at: '2026-01-01T00:00:00Z', delivered: false },
    { from: 'the user', text: 'old news', at: '2026-01-01T00:00:00Z', delivered: true },
  ],
  updated_at: '2026-01-01T00:00:00Z',
};

// Pane agents of the fleets: the Fleet Dashboard's agent cards read them (backend.fleets.agents())
// and set a role and purpose (backend.fleets.setRole()). The server sends snake_case keys.
import type { FleetTaskStatus } from './fleets';

/** The built-in roles; any other name that reads as a role is the user's own. */
export const AGENT_ROLES = ['Builder', 'Monitor', 'Tester', 'Deployer', 'Reviewer', 'General'] as const;

export type AgentStatus = 'idle' | 'working' | 'waiting' | 'blocked';

/** A fleet task as an agent's card lists it. */
export interface AgentTask {
  fleetId: string;
  fleetName: string;
  taskId: string;
  goal: string;
  status: FleetTaskStatus;
  goalId?: string;
  reason?: string;
  priority: number;
  branch?: string;
  /** The persona id the task's goal works as (current task only). */
  persona?: string;
  endedAt?: string;
}

/** How far the current task's goal has come. */
export interface AgentProgress {
  steps: number;
  maxSteps?: number;
  todosDone: number;
  todosTotal: number;
  costUsd: number;
  tokens: number;
  goalStatus?: string;
}

/** Context another agent shared with this one. */
export interface AgentInboxItem {
  from: string;
  text: string;
  at: string;
  /** The agent has it; undelivered items wait for its next turn or task. */
  delivered: boolean;
}

export interface Agent {
  paneId: string;
  role: string;
  purpose: string;
  status: AgentStatus;
  currentTask?: AgentTask;
  queue: AgentTask[];
  history: AgentTask[];
  progress?: AgentProgress;
  inbox: AgentInboxItem[];
  updatedAt: string;
}

/** What is stored of an agent (the answer to a role change). */
export interface AgentRecord {
  paneId: string;
  role: string;
  purpose: string;
  inbox: AgentInboxItem[];
  updatedAt: string;
}

const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const opt = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);
const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
const obj = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' ? (v as Record<string, unknown>) : {});
const STATUSES: readonly AgentStatus[] = ['idle', 'working', 'waiting', 'blocked'];

export function normalizeAgentTask(raw: unknown): AgentTask {
  const t = obj(raw);
  return {
    fleetId: str(t.fleet_id),
    fleetName: str(t.fleet_name),
    taskId: str(t.task_id),
    goal: str(t.goal),
    status: (str(t.status) || 'waiting') as FleetTaskStatus,
    goalId: opt(t.goal_id),
    reason: opt(t.reason),
    priority: num(t.priority),
    branch: opt(t.branch),
    persona: opt(t.persona),
    endedAt: opt(t.ended_at),
  };
}

function normalizeInbox(raw: unknown): AgentInboxItem[] {
  return arr(raw).map((x) => {
    const i = obj(x);
    return { from: str(i.from), text: str(i.text), at: str(i.at), delivered: i.delivered === true };
  });
}

export function normalizeAgent(raw: unknown): Agent {
  const a = obj(raw);
  const p = a.progress ? obj(a.progress) : undefined;
  const status = str(a.status) as AgentStatus;
  return {
    paneId: str(a.pane_id),
    role: str(a.role),
    purpose: str(a.purpose),
    status: STATUSES.includes(status) ? status : 'idle',
    currentTask: a.current_task ? normalizeAgentTask(a.current_task) : undefined,
    queue: arr(a.queue).map(normalizeAgentTask),
    history: arr(a.history).map(normalizeAgentTask),
    progress: p && {
      steps: num(p.steps),
      maxSteps: num(p.max_steps) || undefined,
      todosDone: num(p.todos_done),
      todosTotal: num(p.todos_total),
      costUsd: num(p.cost_usd),
      tokens: num(p.tokens),
      goalStatus: opt(p.goal_status),
    },
    inbox: normalizeInbox(a.inbox),
    updatedAt: str(a.updated_at),
  };
}

export function normalizeAgentRecord(raw: unknown): AgentRecord {
  const r = obj(raw);
  return { paneId: str(r.pane_id), role: str(r.role), purpose: str(r.purpose), inbox: normalizeInbox(r.inbox), updatedAt: str(r.updated_at) };
}

/** The agents of an answer: GET /api/agents sends {agents}, the binding the list itself. */
export function normalizeAgents(raw: unknown): Agent[] {
  const list = Array.isArray(raw) ? raw : obj(raw).agents;
  return arr(list).map(normalizeAgent);
}

// How one goal event changes what the UI holds: the goal's row, a step of its log, an approval.
// Pure functions, so the store's folding can be tested event by event.
import type { Goal, GoalApproval, GoalEvent, GoalStatus, GoalStep, Risk, Todo } from '../api';
import { normalizeUsage } from '../api';

/** A step as the log holds it; `partial` until the stored step (with the whole result) is read. */
export type TimelineStep = GoalStep & { partial?: boolean };

/** What the goal last did, for a pane's badge. */
export interface LastStep {
  tool: string;
  preview: string;
  isError: boolean;
}

const STATUSES: readonly GoalStatus[] = [
  'pending',
  'running',
  'paused',
  'awaiting_approval',
  'budget_exceeded',
  'interrupted',
  'completed',
  'failed',
  'aborted',
];

function status(v: unknown): GoalStatus | undefined {
  return STATUSES.includes(v as GoalStatus) ? (v as GoalStatus) : undefined;
}

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const text = (v: unknown): string => (typeof v === 'string' ? v : '');

/** The later of two ISO times ('' and unparseable ones lose). */
function later(a: string, b: string): string {
  const ta = Date.parse(a);
  const tb = Date.parse(b);
  if (Number.isNaN(tb)) return a;
  if (Number.isNaN(ta)) return b;
  return tb > ta ? b : a;
}

/**
 * The goal after one of its stored events. Folding is idempotent for an event the goal already
 * reflects, so events may be folded again over a goal read from the backend meanwhile.
 */
export function foldEvent(g: Goal, e: GoalEvent): Goal {
  const d = e.data ?? {};
  const next: Goal = { ...g, state: { ...g.state }, updatedAt: later(g.updatedAt, e.at) };
  switch (e.type) {
    case 'status':
      next.status = status(d.status) ?? next.status;
      break;
    case 'started':
      next.status = 'running';
      next.startedAt ??= e.at;
      break;
    case 'resumed':
      // Also how a re-opened goal comes back: it is no longer finished.
      next.status = 'running';
      next.endedAt = undefined;
      if (g.status === 'completed' || g.status === 'failed' || g.status === 'aborted') next.report = '';
      break;
    case 'paused':
      next.status = 'paused';
      break;
    case 'approval_requested':
      next.status = 'awaiting_approval';
      break;
    case 'approval_resolved':
      if (next.status === 'awaiting_approval') next.status = 'running';
      break;
    case 'step':
      next.state.steps = Math.max(next.state.steps, num(d.index) ?? 0);
      break;
    case 'critic':
      if (text(d.verdict)) next.state.lastCritic = text(d.verdict);
      break;
    case 'verification_failed':
      next.state.bounces = num(d.bounces) ?? next.state.bounces;
      break;
    case 'notice':
      if (Array.isArray(d.todos)) {
        next.state.todos = d.todos as Todo[];
        next.state.activeTodo = num(d.active) ?? 0;
      }
      break;
    case 'ended':
      next.status = status(d.status) ?? next.status;
      next.report = text(d.report);
      next.endedAt = e.at;
      break;
  }
  return next;
}

/** A goal the UI has heard of only through an event: a stand-in until the backend is read. */
export function placeholderGoal(id: string): Goal {
  return {
    id,
    spec: { paneId: '', goal: '', criterion: { kind: 'manual' }, policy: { risk: 'write_local' }, settings: {} },
    status: 'pending',
    report: '',
    state: {
      steps: 0,
      bounces: 0,
      modelTurns: 0,
      usage: { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, cacheWriteTokens: 0 },
      costUsd: 0,
      elapsedMs: 0,
      todos: [],
      activeTodo: 0,
      stepsSinceCritic: 0,
      granted: [],
      guardBlocks: 0,
      lastCritic: '',
    },
    createdAt: '',
    updatedAt: '',
  };
}

/** The step a 'step' event announces: its result is only the preview until the step is read. */
export function stepFromEvent(e: GoalEvent): TimelineStep | null {
  const d = e.data ?? {};
  const index = num(d.index);
  if (!index) return null;
  const durationMs = num(d.durationMs) ?? 0;
  const at = Date.parse(e.at);
  return {
    goalId: e.goalId,
    index,
    callId: '',
    tool: text(d.tool),
    args: d.args ?? {},
    result: text(d.preview),
    isError: d.isError === true,
    startedAt: Number.isNaN(at) ? e.at : new Date(at - durationMs).toISOString(),
    durationMs,
    images: num(d.images) ?? 0,
    ...(d.usage ? { usage: normalizeUsage(d.usage) } : {}),
    partial: true,
  };
}

export function lastStepFromEvent(e: GoalEvent): LastStep | null {
  if (e.type !== 'step') return null;
  return { tool: text(e.data.tool), preview: text(e.data.preview), isError: e.data.isError === true };
}

/** The approval an approval_requested or approval_resolved event carries. */
export function approvalFromEvent(e: GoalEvent): GoalApproval | null {
  const d = e.data ?? {};
  if (!text(d.id)) return null;
  return {
    id: text(d.id),
    goalId: text(d.goalId) || e.goalId,
    callId: text(d.callId),
    tool: text(d.tool),
    args: d.args ?? {},
    risk: (text(d.risk) || 'network_write') as Risk,
    reason: text(d.reason),
    status: (text(d.status) || 'pending') as GoalApproval['status'],
    answerReason: text(d.answerReason) || undefined,
    createdAt: text(d.createdAt) || e.at,
    answeredAt: text(d.answeredAt) || undefined,
  };
}

/** Events after which a goal no longer waits for any approval it had asked for. */
export function withdrawsApprovals(e: GoalEvent): boolean {
  return e.type === 'paused' || e.type === 'ended' || (e.type === 'status' && e.data.status === 'interrupted');
}

// The Goal Runner's API: its types (the generated wire types of backend/goal, narrowed where the
// UI knows more than Go's types say) and GoalsCalls, its calls of the table over either
// transport. The Backend exposes it as `backend.goals`, so the goal features never learn which
// door they use.
import { BackendError } from './errors';
import type { Call } from './table';
import type * as agent from './gen/agent';
import type * as config from './gen/config';
import type * as criterion from './gen/criterion';
import type * as goal from './gen/goal';
import type * as llm from './gen/llm';
import type * as policy from './gen/policy';
import type * as tools from './gen/tools';

/** The event topic of goals: every persisted event, plus live-only 'delta' (streamed text). */
export const GOAL_TOPIC = 'goals';

export type GoalStatus = goal.Status;

/** Statuses a goal never leaves on its own (it may still be re-opened). */
export const FINISHED_STATUSES: readonly GoalStatus[] = ['completed', 'failed', 'aborted'];

export function isFinished(status: GoalStatus): boolean {
  return FINISHED_STATUSES.includes(status);
}

/** The risk ladder, lowest first. */
export const RISKS = ['read_only', 'write_local', 'network_get', 'network_write', 'spends_money'] as const;
export type Risk = (typeof RISKS)[number];

export type CriterionKind = 'shell' | 'model_question' | 'json_predicate' | 'visual' | 'manual';

/** How the runner checks a claim of completion. Only the kind's own fields may be set. */
export type CriterionSpec = Omit<criterion.Spec, 'kind'> & { kind: CriterionKind };

/** A goal's rules; `risk` is the ceiling: tools above it ask the user. */
export type GoalPolicy = Omit<policy.Policy, 'risk'> & { risk: Risk };

/** A goal's runtime knobs (durations as Go writes them, "30m0s"); absent: the defaults. */
export type GoalRunSettings = goal.Settings;

/** What a goal is: sent to start one, and kept with it. */
export type GoalSpec = Omit<goal.Spec, 'criterion' | 'policy'> & { criterion: CriterionSpec; policy: GoalPolicy };

export type Todo = goal.Todo;

/** Tokens used; input counts cached input too, which cachedInputTokens and cacheWriteTokens break out. */
export type TokenUsage = Required<llm.Usage>;

/** The usage as stored, with its optional counts (Go omits zeros) read as numbers. */
export function normalizeUsage(raw: unknown): TokenUsage {
  const u = (raw ?? {}) as Partial<TokenUsage>;
  const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
  return {
    inputTokens: n(u.inputTokens),
    outputTokens: n(u.outputTokens),
    cachedInputTokens: n(u.cachedInputTokens),
    cacheWriteTokens: n(u.cacheWriteTokens),
  };
}

/** A goal's progress; the lists and texts Go omits when empty are filled in (normalizeGoal). */
export type GoalState = Omit<goal.State, 'usage' | 'todos' | 'granted' | 'lastCritic'> & {
  usage: TokenUsage;
  todos: Todo[];
  granted: string[];
  lastCritic: string;
};

export type Goal = Omit<goal.Goal, 'spec' | 'state'> & { spec: GoalSpec; state: GoalState };

/** One tool call the runner made; `images` pictures are kept with it (fetch each with stepImage). */
export type GoalStep = Omit<goal.Step, 'usage'> & { usage?: TokenUsage };

/**
 * One entry of a goal's story. Stored types: started, step, critic, guard, verification_failed,
 * verification_passed, approval_requested, approval_resolved, paused, resumed, steered, ended,
 * status, notice. 'delta' (streamed model text) arrives live only.
 */
export type GoalEvent = Omit<goal.Event, 'data'> & { data: Record<string, unknown> };

export type ApprovalStatus = agent.ApprovalStatus;
export type ApprovalAnswer = Exclude<ApprovalStatus, 'pending'>;

/**
 * A tool call waiting for the user's yes (or answered): goals and chat ask alike. One casing
 * on the wire, camelCase; only `args` is the tool's own arguments as the model sent them, in
 * the tool schema's snake_case (`pane_id`), which the manual documents and the UI shows as is.
 */
export type ApprovalRequest = Omit<agent.Approval, 'goalId' | 'workspaceId' | 'conversationId' | 'risk'> & { risk: Risk };

/** A tool call above the goal's ceiling. */
export type GoalApproval = ApprovalRequest & { goalId: string };

/** A tool of the registry, as the allow/deny pickers show it. */
export type ToolDefinition = Omit<tools.Definition, 'risk' | 'source'> & {
  risk: Risk;
  /** Where a tool not built in comes from: 'plugin' (tools/*.js) or 'mcp' (an MCP server). */
  source?: 'plugin' | 'mcp';
};

/** Settings → Goals. 0 = no cap. */
export type GoalDefaults = config.GoalDefaults;

/** How a goal is started, besides its spec. */
export interface StartGoalOptions {
  /** Run it in its own git worktree and branch, made from the repository its sandbox is in. */
  worktree?: boolean;
}

export interface GoalsApi {
  /** Every goal, newest activity first. */
  list(): Promise<Goal[]>;
  /** Validates and queues; a refusal is a BackendError whose `field` names the spec field. */
  start(spec: GoalSpec, opts?: StartGoalOptions): Promise<Goal>;
  get(id: string): Promise<Goal>;
  /** Up to `limit` steps with index > after, in order. */
  steps(id: string, after: number, limit: number): Promise<GoalStep[]>;
  /** A picture kept with a step, as a data: URL for an <img>. */
  stepImage(id: string, index: number, n: number): Promise<string>;
  /** Stored events with seq > after, in order. */
  events(id: string, after: number): Promise<GoalEvent[]>;
  pause(id: string): Promise<void>;
  /** Also continues an interrupted goal, reloading its prior context. */
  resume(id: string): Promise<void>;
  abort(id: string): Promise<void>;
  remove(id: string): Promise<void>;
  /** A message the model gets on its next turn. */
  steer(id: string, text: string): Promise<void>;
  /** Continues a finished goal with the user's feedback. */
  reopen(id: string, feedback: string): Promise<void>;
  /** 0 keeps that part of the budget; a goal held for its budget goes on. */
  raiseBudget(id: string, budgetUsd: number, budgetTokens: number): Promise<void>;
  /** Deletes every finished goal; resolves to how many. */
  prune(): Promise<number>;
  pendingApprovals(): Promise<GoalApproval[]>;
  answerApproval(id: string, answer: ApprovalAnswer, reason: string): Promise<GoalApproval>;
  tools(): Promise<ToolDefinition[]>;
  settings(): Promise<GoalDefaults>;
  setSettings(d: GoalDefaults): Promise<GoalDefaults>;
}

// ---- normalizing what arrives ----------------------------------------------------------------

const arr = <T>(v: unknown): T[] => (Array.isArray(v) ? (v as T[]) : []);

export function normalizeGoal(raw: unknown): Goal {
  const g = (raw ?? {}) as Partial<Goal>;
  const st = (g.state ?? {}) as Partial<GoalState>;
  const spec = (g.spec ?? {}) as Partial<GoalSpec>;
  return {
    id: String(g.id ?? ''),
    spec: {
      paneId: String(spec.paneId ?? ''),
      goal: String(spec.goal ?? ''),
      criterion: (spec.criterion ?? { kind: 'manual' }) as CriterionSpec,
      policy: { risk: 'write_local', ...(spec.policy ?? {}) } as GoalPolicy,
      settings: (spec.settings ?? {}) as GoalRunSettings,
      dependsOn: arr<string>(spec.dependsOn),
      ...(spec.persona ? { persona: String(spec.persona) } : {}),
      ...(arr<string>(spec.skills).length ? { skills: arr<string>(spec.skills) } : {}),
      ...(spec.worktree ? { worktree: spec.worktree } : {}),
    },
    status: (g.status ?? 'pending') as GoalStatus,
    report: String(g.report ?? ''),
    state: {
      steps: st.steps ?? 0,
      bounces: st.bounces ?? 0,
      modelTurns: st.modelTurns ?? 0,
      usage: normalizeUsage(st.usage),
      costUsd: st.costUsd ?? 0,
      elapsedMs: st.elapsedMs ?? 0,
      todos: arr<Todo>(st.todos),
      activeTodo: st.activeTodo ?? 0,
      declared: st.declared,
      stepsSinceCritic: st.stepsSinceCritic ?? 0,
      granted: arr<string>(st.granted),
      guardBlocks: st.guardBlocks ?? 0,
      lastCritic: st.lastCritic ?? '',
    },
    createdAt: String(g.createdAt ?? ''),
    updatedAt: String(g.updatedAt ?? ''),
    startedAt: g.startedAt,
    endedAt: g.endedAt,
  };
}

export function normalizeStep(raw: unknown): GoalStep {
  const s = (raw ?? {}) as Partial<GoalStep>;
  return {
    goalId: String(s.goalId ?? ''),
    index: s.index ?? 0,
    callId: String(s.callId ?? ''),
    tool: String(s.tool ?? ''),
    args: s.args ?? {},
    result: String(s.result ?? ''),
    isError: s.isError === true,
    startedAt: String(s.startedAt ?? ''),
    durationMs: s.durationMs ?? 0,
    images: s.images ?? 0,
    ...(s.usage ? { usage: normalizeUsage(s.usage) } : {}),
  };
}

export function normalizeGoalEvent(raw: unknown): GoalEvent {
  const e = (raw ?? {}) as Partial<GoalEvent>;
  return {
    goalId: String(e.goalId ?? ''),
    seq: e.seq ?? 0,
    type: String(e.type ?? ''),
    data: e.data && typeof e.data === 'object' ? (e.data as Record<string, unknown>) : {},
    at: String(e.at ?? ''),
  };
}

function dataURL(img: { mediaType?: string; data?: string } | null | undefined): string {
  if (!img?.data) throw new BackendError('The step has no such picture');
  return `data:${img.mediaType || 'image/png'};base64,${img.data}`;
}

/** The Goal Runner's calls of the table, over either transport's Call. */
export class GoalsCalls implements GoalsApi {
  constructor(private readonly call: Call) {}

  async list() {
    return (await this.call('ListGoals', {})).goals.map(normalizeGoal);
  }
  async start(spec: GoalSpec, opts?: StartGoalOptions) {
    return normalizeGoal(await this.call('StartGoal', opts?.worktree ? { spec, worktree: true } : { spec }));
  }
  async get(id: string) {
    return normalizeGoal(await this.call('GetGoal', { id }));
  }
  async steps(id: string, after: number, limit: number) {
    return (await this.call('GoalSteps', { id, after, limit })).steps.map(normalizeStep);
  }
  async stepImage(id: string, index: number, n: number) {
    return dataURL(await this.call('GoalStepImage', { id, index, n }));
  }
  async events(id: string, after: number) {
    return (await this.call('GoalEvents', { id, after })).events.map(normalizeGoalEvent);
  }
  pause(id: string) {
    return this.call('PauseGoal', { id });
  }
  resume(id: string) {
    return this.call('ResumeGoal', { id });
  }
  abort(id: string) {
    return this.call('AbortGoal', { id });
  }
  remove(id: string) {
    return this.call('DeleteGoal', { id });
  }
  steer(id: string, text: string) {
    return this.call('SteerGoal', { id, text });
  }
  reopen(id: string, feedback: string) {
    return this.call('ReopenGoal', { id, feedback });
  }
  raiseBudget(id: string, budgetUsd: number, budgetTokens: number) {
    return this.call('RaiseGoalBudget', { id, budgetUsd, budgetTokens });
  }
  async prune() {
    return (await this.call('PruneGoals', {})).deleted;
  }
  async pendingApprovals() {
    // The goal service's approvals always name their goal.
    return (await this.call('PendingApprovals', {})).approvals as GoalApproval[];
  }
  async answerApproval(id: string, answer: ApprovalAnswer, reason: string) {
    return (await this.call('AnswerApproval', { id, status: answer, reason })) as GoalApproval;
  }
  async tools() {
    return (await this.call('Tools', {})).tools as ToolDefinition[];
  }
  settings() {
    return this.call('GoalSettings', {});
  }
  setSettings(d: GoalDefaults) {
    return this.call('SetGoalSettings', { settings: d });
  }
}

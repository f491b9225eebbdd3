// The Goal Runner's API: its types, and the two transports' implementations of GoalsApi. The
// Backend exposes one as `backend.goals`, so the goal features never learn which door they use.
import { BackendError, callWails } from './errors';

/** The event topic of goals: every persisted event, plus live-only 'delta' (streamed text). */
export const GOAL_TOPIC = 'goals';

export type GoalStatus =
  | 'pending'
  | 'running'
  | 'paused'
  | 'awaiting_approval'
  | 'budget_exceeded'
  | 'interrupted'
  | 'completed'
  | 'failed'
  | 'aborted';

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
export interface CriterionSpec {
  kind: CriterionKind;
  /** shell */
  command?: string;
  exitCode?: number;
  /** shell and json_predicate's command source; Go duration text ("90s") or seconds. */
  timeout?: string | number;
  /** model_question and visual */
  question?: string;
  /** model_question: 'yes' (default) | 'high_confidence' */
  threshold?: string;
  /** json_predicate */
  expr?: string;
  /** json_predicate: 'claim' (default) | 'file:PATH' | 'command:CMD' */
  source?: string;
  /** visual: the browser pane to look at */
  paneId?: string;
}

export interface GoalPolicy {
  /** The ceiling: tools above it ask the user. */
  risk: Risk;
  sandboxDir?: string;
  allowedTools?: string[];
  deniedTools?: string[];
  requireStepProtocol?: boolean;
}

export interface GoalRunSettings {
  /** Provider id or name; '' = the default provider. */
  provider?: string;
  criticProvider?: string;
  /** 0 = no critic; absent = the default (5). */
  criticIntervalSteps?: number;
  /** Go duration text ("30m") or seconds. */
  wallClock?: string | number;
  maxSteps?: number;
  bounceBudget?: number;
  budgetUsd?: number;
  budgetTokens?: number;
  finalizeCritic?: boolean;
  workDir?: string;
}

/** What a goal is: sent to start one, and kept with it. */
export interface GoalSpec {
  paneId: string;
  goal: string;
  criterion: CriterionSpec;
  policy: GoalPolicy;
  settings: GoalRunSettings;
  dependsOn?: string[];
  /** A persona id of the catalog (backend.catalog): its prompt, temperature and tools shape the agent. */
  persona?: string;
  /** Skill ids attached up front. */
  skills?: string[];
}

export interface Todo {
  text: string;
  done: boolean;
  note?: string;
}

/** Tokens used; input counts cached input too, which cachedInputTokens and cacheWriteTokens break out. */
export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens?: number;
  cacheWriteTokens?: number;
}

/** The usage as stored, with its optional counts read as numbers. */
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

export interface GoalState {
  steps: number;
  bounces: number;
  modelTurns: number;
  usage: TokenUsage;
  costUsd: number;
  elapsedMs: number;
  todos: Todo[];
  activeTodo: number;
  declared?: { number: number; title: string; action: string; successCriteria: string };
  stepsSinceCritic: number;
  granted: string[];
  guardBlocks: number;
  lastCritic: string;
}

export interface Goal {
  id: string;
  spec: GoalSpec;
  status: GoalStatus;
  report: string;
  state: GoalState;
  createdAt: string;
  updatedAt: string;
  startedAt?: string;
  endedAt?: string;
}

/** One tool call the runner made. */
export interface GoalStep {
  goalId: string;
  index: number;
  callId: string;
  tool: string;
  /** The arguments as the model sent them (JSON). */
  args: unknown;
  result: string;
  isError: boolean;
  startedAt: string;
  durationMs: number;
  /** Pictures kept with the step (screenshots); fetch each with goalStepImage. */
  images: number;
  /** The tokens of the model turn that asked for this step (its batch's first step only). */
  usage?: TokenUsage;
}

/**
 * One entry of a goal's story. Stored types: started, step, critic, guard, verification_failed,
 * verification_passed, approval_requested, approval_resolved, paused, resumed, steered, ended,
 * status, notice. 'delta' (streamed model text) arrives live only.
 */
export interface GoalEvent {
  goalId: string;
  seq: number;
  type: string;
  data: Record<string, unknown>;
  at: string;
}

export type ApprovalStatus = 'pending' | 'allow_once' | 'allow_goal' | 'deny';
export type ApprovalAnswer = Exclude<ApprovalStatus, 'pending'>;

/** A tool call waiting for the user's yes (or answered): goals and chat ask alike. */
export interface ApprovalRequest {
  id: string;
  callId: string;
  tool: string;
  args: unknown;
  risk: Risk;
  reason: string;
  status: ApprovalStatus;
  answerReason?: string;
  createdAt: string;
  answeredAt?: string;
}

/** A tool call above the goal's ceiling. */
export interface GoalApproval extends ApprovalRequest {
  goalId: string;
}

/** A tool of the registry, as the allow/deny pickers show it. */
export interface ToolDefinition {
  name: string;
  description: string;
  schema: unknown;
  risk: Risk;
  /** Where a tool not built in comes from: 'plugin' (tools/*.js) or 'mcp' (an MCP server). */
  source?: 'plugin' | 'mcp';
}

/** Settings → Goals. 0 = no cap. */
export interface GoalDefaults {
  maxConcurrent: number;
  budgetUsd: number;
  budgetTokens: number;
}

/**
 * Request fields the goal API names in its errors ("settings.provider: …"). The web transport
 * gets the field from the JSON error; the desktop one reads it from the message's prefix.
 */
export const GOAL_ERROR_FIELDS = [
  'goal',
  'persona',
  'skill',
  'skills',
  'paneId',
  'criterion.kind',
  'criterion.command',
  'criterion.exitCode',
  'criterion.timeout',
  'criterion.question',
  'criterion.threshold',
  'criterion.expr',
  'criterion.source',
  'criterion.paneId',
  'policy.risk',
  'policy.sandboxDir',
  'policy.allowedTools',
  'policy.deniedTools',
  'settings.provider',
  'settings.criticProvider',
  'settings.criticIntervalSteps',
  'settings.budgetUsd',
  'settings.budgetTokens',
  'dependsOn',
  'text',
  'feedback',
  'budget',
  'status',
  'maxConcurrent',
  'budgetUsd',
  'budgetTokens',
] as const;

export interface GoalsApi {
  /** Every goal, newest activity first. */
  list(): Promise<Goal[]>;
  /** Validates and queues; a refusal is a BackendError whose `field` names the spec field. */
  start(spec: GoalSpec): Promise<Goal>;
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

// ---- web transport ---------------------------------------------------------------------------

/** The web transport's authenticated JSON request. */
export type JsonRequest = <T>(method: string, path: string, body?: unknown) => Promise<T>;

const enc = encodeURIComponent;

export class HttpGoals implements GoalsApi {
  constructor(private readonly json: JsonRequest) {}

  async list() {
    return arr(((await this.json<{ goals: unknown }>('GET', '/api/goals')) ?? {}).goals).map(normalizeGoal);
  }
  async start(spec: GoalSpec) {
    return normalizeGoal(await this.json('POST', '/api/goals', spec));
  }
  async get(id: string) {
    return normalizeGoal(await this.json('GET', `/api/goals/${enc(id)}`));
  }
  async steps(id: string, after: number, limit: number) {
    const body = await this.json<{ steps: unknown }>('GET', `/api/goals/${enc(id)}/steps?after=${after}&limit=${limit}`);
    return arr(body?.steps).map(normalizeStep);
  }
  async stepImage(id: string, index: number, n: number) {
    return dataURL(await this.json('GET', `/api/goals/${enc(id)}/steps/${index}/images/${n}`));
  }
  async events(id: string, after: number) {
    const body = await this.json<{ events: unknown }>('GET', `/api/goals/${enc(id)}/events?after=${after}`);
    return arr(body?.events).map(normalizeGoalEvent);
  }
  async pause(id: string) {
    await this.json('POST', `/api/goals/${enc(id)}/pause`);
  }
  async resume(id: string) {
    await this.json('POST', `/api/goals/${enc(id)}/resume`);
  }
  async abort(id: string) {
    await this.json('POST', `/api/goals/${enc(id)}/abort`);
  }
  async remove(id: string) {
    await this.json('DELETE', `/api/goals/${enc(id)}`);
  }
  async steer(id: string, text: string) {
    await this.json('POST', `/api/goals/${enc(id)}/steer`, { text });
  }
  async reopen(id: string, feedback: string) {
    await this.json('POST', `/api/goals/${enc(id)}/reopen`, { feedback });
  }
  async raiseBudget(id: string, budgetUsd: number, budgetTokens: number) {
    await this.json('POST', `/api/goals/${enc(id)}/budget`, { budgetUsd, budgetTokens });
  }
  async prune() {
    return (await this.json<{ deleted: number }>('POST', '/api/goals/prune'))?.deleted ?? 0;
  }
  async pendingApprovals() {
    return arr<GoalApproval>((await this.json<{ approvals: unknown }>('GET', '/api/approvals'))?.approvals);
  }
  answerApproval(id: string, answer: ApprovalAnswer, reason: string) {
    return this.json<GoalApproval>('POST', `/api/approvals/${enc(id)}`, { status: answer, reason });
  }
  async tools() {
    return arr<ToolDefinition>((await this.json<{ tools: unknown }>('GET', '/api/tools'))?.tools);
  }
  settings() {
    return this.json<GoalDefaults>('GET', '/api/settings/goals');
  }
  setSettings(d: GoalDefaults) {
    return this.json<GoalDefaults>('PUT', '/api/settings/goals', d);
  }
}

// ---- desktop transport -----------------------------------------------------------------------

/** The bound Go methods of app_goals.go (Go's nil slices arrive as null). */
export interface WailsGoalMethods {
  ListGoals(): Promise<unknown[] | null>;
  StartGoal(spec: GoalSpec): Promise<unknown>;
  GetGoal(id: string): Promise<unknown>;
  GoalSteps(id: string, after: number, limit: number): Promise<unknown[] | null>;
  GoalStepImage(id: string, index: number, n: number): Promise<{ mediaType: string; data: string }>;
  GoalEvents(id: string, after: number): Promise<unknown[] | null>;
  PauseGoal(id: string): Promise<void>;
  ResumeGoal(id: string): Promise<void>;
  AbortGoal(id: string): Promise<void>;
  DeleteGoal(id: string): Promise<void>;
  SteerGoal(id: string, text: string): Promise<void>;
  ReopenGoal(id: string, feedback: string): Promise<void>;
  RaiseGoalBudget(id: string, usd: number, tokens: number): Promise<void>;
  PruneGoals(): Promise<number>;
  PendingApprovals(): Promise<GoalApproval[] | null>;
  AnswerApproval(id: string, status: string, reason: string): Promise<GoalApproval>;
  Tools(): Promise<ToolDefinition[] | null>;
  GoalSettings(): Promise<GoalDefaults>;
  SetGoalSettings(d: GoalDefaults): Promise<void>;
}

export class WailsGoals implements GoalsApi {
  constructor(private readonly app: WailsGoalMethods) {}

  private call<T>(fn: () => Promise<T>) {
    return callWails(fn, GOAL_ERROR_FIELDS);
  }
  async list() {
    return arr(await this.call(() => this.app.ListGoals())).map(normalizeGoal);
  }
  async start(spec: GoalSpec) {
    return normalizeGoal(await this.call(() => this.app.StartGoal(spec)));
  }
  async get(id: string) {
    return normalizeGoal(await this.call(() => this.app.GetGoal(id)));
  }
  async steps(id: string, after: number, limit: number) {
    return arr(await this.call(() => this.app.GoalSteps(id, after, limit))).map(normalizeStep);
  }
  async stepImage(id: string, index: number, n: number) {
    return dataURL(await this.call(() => this.app.GoalStepImage(id, index, n)));
  }
  async events(id: string, after: number) {
    return arr(await this.call(() => this.app.GoalEvents(id, after))).map(normalizeGoalEvent);
  }
  pause(id: string) {
    return this.call(() => this.app.PauseGoal(id));
  }
  resume(id: string) {
    return this.call(() => this.app.ResumeGoal(id));
  }
  abort(id: string) {
    return this.call(() => this.app.AbortGoal(id));
  }
  remove(id: string) {
    return this.call(() => this.app.DeleteGoal(id));
  }
  steer(id: string, text: string) {
    return this.call(() => this.app.SteerGoal(id, text));
  }
  reopen(id: string, feedback: string) {
    return this.call(() => this.app.ReopenGoal(id, feedback));
  }
  raiseBudget(id: string, budgetUsd: number, budgetTokens: number) {
    return this.call(() => this.app.RaiseGoalBudget(id, budgetUsd, budgetTokens));
  }
  prune() {
    return this.call(() => this.app.PruneGoals());
  }
  async pendingApprovals() {
    return arr<GoalApproval>(await this.call(() => this.app.PendingApprovals()));
  }
  answerApproval(id: string, answer: ApprovalAnswer, reason: string) {
    return this.call(() => this.app.AnswerApproval(id, answer, reason));
  }
  async tools() {
    return arr<ToolDefinition>(await this.call(() => this.app.Tools()));
  }
  settings() {
    return this.call(() => this.app.GoalSettings());
  }
  async setSettings(d: GoalDefaults) {
    await this.call(() => this.app.SetGoalSettings(d));
    return d;
  }
}

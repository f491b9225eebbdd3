// Fleets' API: their types, and the two transports' implementations of FleetsApi. The Backend
// exposes one as `backend.fleets`, so the fleet features never learn which door they use.
import { type Agent, type AgentRecord, normalizeAgentRecord, normalizeAgents } from './agents';
import { BackendError, callWails, errorMessage } from './errors';
import type { CriterionSpec, GoalPolicy, GoalRunSettings, JsonRequest } from './goals';

/** The event topic of fleets: a task's or the fleet's status changed. */
export const FLEET_TOPIC = 'fleets';

export type FleetStatus = 'running' | 'interrupted' | 'completed' | 'failed' | 'aborted';
export type FleetTaskStatus = 'waiting' | 'running' | 'completed' | 'failed' | 'aborted' | 'blocked';

export const FLEET_FINISHED: readonly FleetStatus[] = ['completed', 'failed', 'aborted'];

/** A task as a fleet file gives it. */
export interface FleetTaskSpec {
  id: string;
  goal: string;
  /** The terminal pane it runs in; made if missing. */
  pane: string;
  role?: string;
  /** A persona id of the catalog the task's agent takes. */
  persona?: string;
  /** A pane launch template id (claude, codex, shell, …) the pane starts as when the fleet makes it. */
  template?: string;
  isolation?: string;
  ssh?: string;
  priority?: number;
  dependsOn?: string[];
  criterion: CriterionSpec;
}

/** A task as stored and shown. */
export interface FleetTask extends FleetTaskSpec {
  seq: number;
  status: FleetTaskStatus;
  /** Why it is blocked. */
  reason?: string;
  goalId?: string;
  /** Its goal's final report. */
  report?: string;
  createdAt: string;
  startedAt?: string;
  endedAt?: string;
}

export interface Fleet {
  id: string;
  name: string;
  status: FleetStatus;
  spec: { concurrency: number; policy: GoalPolicy; settings: GoalRunSettings; owner?: string };
  tasks: FleetTask[];
  createdAt: string;
  updatedAt: string;
}

/** A fleet file, as the server reads it. */
export interface FleetFile {
  name: string;
  concurrency: number;
  /** 'worktree': every task in its own git worktree; setup runs in each new one. */
  isolation?: string;
  setup?: string;
  tasks: FleetTaskSpec[];
}

/** One change on the 'fleets' topic. */
export interface FleetEvent {
  fleetId: string;
  taskId?: string;
  type: 'task' | 'fleet';
  status: string;
  goalId?: string;
  pane?: string;
  reason?: string;
  report?: string;
  at: string;
}

export const FLEET_ACTIONS = ['pause', 'resume', 'abort', 'retry', 'steer'] as const;
export type FleetAction = (typeof FLEET_ACTIONS)[number];

/** What a bulk action did to one task. */
export interface FleetOutcome {
  taskId: string;
  ok: boolean;
  error?: string;
}

export interface FleetBulkResult {
  outcomes: FleetOutcome[];
  fleet: Fleet;
}

/** How a fleet started from the window runs; absent parts take the defaults (write_local). */
export interface FleetRunOptions {
  policy?: GoalPolicy;
  settings?: GoalRunSettings;
}

export interface ParsedFleet {
  file: FleetFile;
  /** The file in its canonical form. */
  yaml: string;
}

export interface FleetsApi {
  /** Every fleet, newest first. */
  list(): Promise<Fleet[]>;
  get(id: string): Promise<Fleet>;
  /** Checks a fleet file (YAML) without running it; a mistake rejects naming task and field. */
  parse(yaml: string): Promise<ParsedFleet>;
  /** Stores the fleet and starts it; every task's goal is checked first. */
  create(yaml: string, run?: FleetRunOptions): Promise<Fleet>;
  /** The fleet's file as YAML. */
  exportYaml(id: string): Promise<string>;
  abort(id: string): Promise<Fleet>;
  resume(id: string): Promise<Fleet>;
  /** Applies one action to a selection of tasks; each task gets its own outcome. */
  bulk(id: string, taskIds: string[], action: FleetAction, text?: string): Promise<FleetBulkResult>;
  /** Saves a fleet file: a download in a browser, the native save dialog on the desktop. */
  saveFile(name: string, yaml: string): Promise<void>;
  /** Every pane's agent (the dashboard's agent cards), by pane id. */
  agents(): Promise<Agent[]>;
  /** Gives a pane's agent a role and purpose; a mistake rejects naming the field. */
  setRole(paneId: string, role: string, purpose: string): Promise<AgentRecord>;
}

// ---- where an error points ---------------------------------------------------------------------

/** Where the server's refusal of a fleet file points: the task (its id, or "#N") and the field. */
export interface FleetErrorPlace {
  task?: string;
  field?: string;
  message: string;
}

/**
 * Reads the task and field out of a fleet error. Both doors send the service's text,
 * `task "build": check_shell: …` or `concurrency: …`; the web one also sends `field`.
 */
export function fleetErrorPlace(err: unknown): FleetErrorPlace {
  const message = errorMessage(err);
  const m = /^task ("(?:[^"\\]|\\.)*"|#\d+): ([A-Za-z_][A-Za-z_.]*): /.exec(message);
  if (m) {
    const task = m[1].startsWith('"') ? (JSON.parse(m[1]) as string) : m[1];
    return { task, field: m[2], message };
  }
  const top = /^([A-Za-z_][A-Za-z_.]*): /.exec(message);
  const field = err instanceof BackendError && err.field ? err.field : top?.[1];
  return { field, message };
}

// ---- normalizing what arrives ----------------------------------------------------------------

const arr = <T>(v: unknown): T[] => (Array.isArray(v) ? (v as T[]) : []);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const opt = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);

export function normalizeTaskSpec(raw: unknown): FleetTaskSpec {
  const t = (raw ?? {}) as Record<string, unknown>;
  return {
    id: str(t.id),
    goal: str(t.goal),
    pane: str(t.pane),
    role: opt(t.role),
    priority: typeof t.priority === 'number' ? t.priority : 0,
    dependsOn: arr<string>(t.dependsOn),
    criterion: (t.criterion && typeof t.criterion === 'object' ? t.criterion : { kind: 'model_question' }) as CriterionSpec,
  };
}

export function normalizeTask(raw: unknown): FleetTask {
  const t = (raw ?? {}) as Record<string, unknown>;
  return {
    ...normalizeTaskSpec(raw),
    seq: typeof t.seq === 'number' ? t.seq : 0,
    status: (str(t.status) || 'waiting') as FleetTaskStatus,
    reason: opt(t.reason),
    goalId: opt(t.goalId),
    report: opt(t.report),
    createdAt: str(t.createdAt),
    startedAt: opt(t.startedAt),
    endedAt: opt(t.endedAt),
  };
}

export function normalizeFleet(raw: unknown): Fleet {
  const f = (raw ?? {}) as Record<string, unknown>;
  const spec = (f.spec ?? {}) as Record<string, unknown>;
  return {
    id: str(f.id),
    name: str(f.name),
    status: (str(f.status) || 'running') as FleetStatus,
    spec: {
      concurrency: typeof spec.concurrency === 'number' ? spec.concurrency : 0,
      policy: { risk: 'write_local', ...((spec.policy as object) ?? {}) } as GoalPolicy,
      settings: ((spec.settings as object) ?? {}) as GoalRunSettings,
      owner: opt(spec.owner),
    },
    tasks: arr(f.tasks).map(normalizeTask),
    createdAt: str(f.createdAt),
    updatedAt: str(f.updatedAt),
  };
}

export function normalizeFleetEvent(raw: unknown): FleetEvent {
  const e = (raw ?? {}) as Record<string, unknown>;
  return {
    fleetId: str(e.fleetId),
    taskId: opt(e.taskId),
    type: e.type === 'fleet' ? 'fleet' : 'task',
    status: str(e.status),
    goalId: opt(e.goalId),
    pane: opt(e.pane),
    reason: opt(e.reason),
    report: opt(e.report),
    at: str(e.at),
  };
}

function normalizeParsed(raw: unknown): ParsedFleet {
  const p = (raw ?? {}) as { file?: Record<string, unknown>; yaml?: unknown };
  const file = p.file ?? {};
  return {
    file: {
      name: str(file.name),
      concurrency: typeof file.concurrency === 'number' ? file.concurrency : 0,
      tasks: arr(file.tasks).map(normalizeTaskSpec),
    },
    yaml: str(p.yaml),
  };
}

function normalizeBulk(raw: unknown): FleetBulkResult {
  const r = (raw ?? {}) as { outcomes?: unknown; fleet?: unknown };
  return { outcomes: arr<FleetOutcome>(r.outcomes), fleet: normalizeFleet(r.fleet) };
}

// ---- web transport ---------------------------------------------------------------------------

const enc = encodeURIComponent;

export class HttpFleets implements FleetsApi {
  constructor(private readonly json: JsonRequest) {}

  async list() {
    return arr((await this.json<{ fleets: unknown }>('GET', '/api/fleets'))?.fleets).map(normalizeFleet);
  }
  async get(id: string) {
    return normalizeFleet(await this.json('GET', `/api/fleets/${enc(id)}`));
  }
  async parse(yaml: string) {
    return normalizeParsed(await this.json('POST', '/api/fleets/parse', { yaml }));
  }
  async create(yaml: string, run: FleetRunOptions = {}) {
    return normalizeFleet(await this.json('POST', '/api/fleets', { yaml, ...run }));
  }
  async exportYaml(id: string) {
    return str((await this.json<{ yaml: unknown }>('GET', `/api/fleets/${enc(id)}/yaml`))?.yaml);
  }
  async abort(id: string) {
    return normalizeFleet(await this.json('POST', `/api/fleets/${enc(id)}/abort`));
  }
  async resume(id: string) {
    return normalizeFleet(await this.json('POST', `/api/fleets/${enc(id)}/resume`));
  }
  async bulk(id: string, taskIds: string[], action: FleetAction, text = '') {
    return normalizeBulk(await this.json('POST', `/api/fleets/${enc(id)}/tasks/bulk`, { task_ids: taskIds, action, text }));
  }
  async saveFile(name: string, yaml: string) {
    const url = URL.createObjectURL(new Blob([yaml], { type: 'application/yaml' }));
    const a = document.createElement('a');
    a.href = url;
    a.download = `${name}.yaml`;
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  }
  async agents() {
    return normalizeAgents(await this.json('GET', '/api/agents'));
  }
  async setRole(paneId: string, role: string, purpose: string) {
    return normalizeAgentRecord(await this.json('PUT', `/api/agents/${enc(paneId)}`, { role, purpose }));
  }
}

// ---- desktop transport -----------------------------------------------------------------------

/** The bound Go methods of app_fleets.go (Go's nil slices arrive as null). */
export interface WailsFleetMethods {
  ListFleets(): Promise<unknown[] | null>;
  GetFleet(id: string): Promise<unknown>;
  ParseFleet(text: string): Promise<unknown>;
  CreateFleet(text: string, run: FleetRunOptions): Promise<unknown>;
  ExportFleet(id: string): Promise<string>;
  AbortFleet(id: string): Promise<unknown>;
  ResumeFleet(id: string): Promise<unknown>;
  FleetBulk(id: string, taskIds: string[], action: string, text: string): Promise<unknown>;
  SaveFleetFile(name: string, text: string): Promise<void>;
  ListAgents(): Promise<unknown[] | null>;
  SetAgentRole(pane: string, role: string, purpose: string): Promise<unknown>;
}

export class WailsFleets implements FleetsApi {
  constructor(private readonly app: WailsFleetMethods) {}

  private call<T>(fn: () => Promise<T>) {
    return callWails(fn);
  }
  async list() {
    return arr(await this.call(() => this.app.ListFleets())).map(normalizeFleet);
  }
  async get(id: string) {
    return normalizeFleet(await this.call(() => this.app.GetFleet(id)));
  }
  async parse(yaml: string) {
    return normalizeParsed(await this.call(() => this.app.ParseFleet(yaml)));
  }
  async create(yaml: string, run: FleetRunOptions = {}) {
    return normalizeFleet(await this.call(() => this.app.CreateFleet(yaml, { policy: run.policy, settings: run.settings })));
  }
  async exportYaml(id: string) {
    return str(await this.call(() => this.app.ExportFleet(id)));
  }
  async abort(id: string) {
    return normalizeFleet(await this.call(() => this.app.AbortFleet(id)));
  }
  async resume(id: string) {
    return normalizeFleet(await this.call(() => this.app.ResumeFleet(id)));
  }
  async bulk(id: string, taskIds: string[], action: FleetAction, text = '') {
    return normalizeBulk(await this.call(() => this.app.FleetBulk(id, taskIds, action, text)));
  }
  saveFile(name: string, yaml: string) {
    return this.call(() => this.app.SaveFleetFile(name, yaml));
  }
  async agents() {
    return normalizeAgents(await this.call(() => this.app.ListAgents()));
  }
  async setRole(paneId: string, role: string, purpose: string) {
    return normalizeAgentRecord(await callWails(() => this.app.SetAgentRole(paneId, role, purpose), ['pane_id', 'role', 'purpose']));
  }
}

// Fleets' API: their types (generated from Go, gen/fleet.ts) and the calls of the table
// (backend/api) that the Backend exposes as `backend.fleets`, written once for both transports.
import type { Agent, AgentRecord } from './agents';
import { BackendError, errorMessage } from './errors';
import type * as api from './gen/api';
import type * as fleet from './gen/fleet';
import type { CriterionSpec, GoalPolicy, GoalRunSettings } from './goals';
import type { Call } from './table';

/** The event topic of fleets: a task's or the fleet's status changed. */
export const FLEET_TOPIC = 'fleets';

export type FleetStatus = fleet.Status;
export type FleetTaskStatus = fleet.TaskStatus;

export const FLEET_FINISHED: readonly FleetStatus[] = ['completed', 'failed', 'aborted'];

/**
 * Where Go's types are wider than the UI's: a criterion's kind and a policy's risk are plain
 * strings in Go (their JSON is one of the UI's unions), a run setting's duration only text.
 */
interface Narrowed {
  criterion: CriterionSpec;
  policy?: GoalPolicy;
  settings?: GoalRunSettings;
}

/** A task as a fleet file gives it. */
export type FleetTaskSpec = Omit<fleet.TaskSpec, keyof Narrowed> & Narrowed;
/** A task as stored and shown. */
export type FleetTask = Omit<fleet.Task, keyof Narrowed> & Narrowed;
export type FleetSpec = Omit<fleet.Spec, 'policy' | 'settings'> & { policy: GoalPolicy; settings: GoalRunSettings };
export type Fleet = Omit<fleet.Fleet, 'spec' | 'tasks'> & { spec: FleetSpec; tasks: FleetTask[] };
/** A fleet file, as the server reads it. */
export type FleetFile = Omit<fleet.File, 'tasks'> & { tasks: FleetTaskSpec[] };

/** One change on the 'fleets' topic (an event, not a call of the table: typed here). */
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

export const FLEET_ACTIONS = ['pause', 'resume', 'abort', 'retry', 'steer'] as const satisfies readonly fleet.Action[];
export type FleetAction = fleet.Action;

/** What a bulk action did to one task. */
export type FleetOutcome = fleet.Outcome;

export type FleetBulkResult = Omit<api.FleetBulkResult, 'fleet'> & { fleet: Fleet };

/** How a fleet started from the window runs; absent parts take the defaults (write_local). */
export interface FleetRunOptions {
  policy?: GoalPolicy;
  settings?: GoalRunSettings;
}

export type ParsedFleet = Omit<api.ParsedFleet, 'file'> & { file: FleetFile };

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
 * `task "build": check_shell: …` or `concurrency: …`, and the field.
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

// ---- events ----------------------------------------------------------------------------------

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const opt = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);

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

// ---- the calls -------------------------------------------------------------------------------

// Go's answers read as the UI's narrower types (see Narrowed): the same JSON, typed from the
// generated type it arrives as, so a Go change still shows in the type check of what is read.
const asFleet = (f: fleet.Fleet) => f as unknown as Fleet;
const asParsed = (p: api.ParsedFleet) => p as unknown as ParsedFleet;
const asBulk = (r: api.FleetBulkResult) => r as unknown as FleetBulkResult;

/** The fleets' and agents' calls over a transport's Call; saving a file is the transport's own. */
export class FleetsCalls implements FleetsApi {
  constructor(
    private readonly call: Call,
    readonly saveFile: (name: string, yaml: string) => Promise<void>,
  ) {}

  async list() {
    return (await this.call('ListFleets', {})).fleets.map(asFleet);
  }
  async get(id: string) {
    return asFleet(await this.call('GetFleet', { id }));
  }
  async parse(yaml: string) {
    return asParsed(await this.call('ParseFleet', { yaml }));
  }
  async create(yaml: string, run: FleetRunOptions = {}) {
    return asFleet(await this.call('CreateFleet', { yaml, ...(run as unknown as Omit<api.CreateFleetArgs, 'yaml'>) }));
  }
  async exportYaml(id: string) {
    return (await this.call('ExportFleet', { id })).yaml;
  }
  async abort(id: string) {
    return asFleet(await this.call('AbortFleet', { id }));
  }
  async resume(id: string) {
    return asFleet(await this.call('ResumeFleet', { id }));
  }
  async bulk(id: string, taskIds: string[], action: FleetAction, text = '') {
    return asBulk(await this.call('FleetBulk', { id, taskIds, action, text }));
  }
  async agents() {
    return (await this.call('ListAgents', {})).agents;
  }
  async setRole(paneId: string, role: string, purpose: string) {
    return this.call('SetAgentRole', { pane: paneId, role, purpose });
  }
}

/** The web's way to save a fleet file: a download. */
export async function downloadFleetFile(name: string, yaml: string): Promise<void> {
  const url = URL.createObjectURL(new Blob([yaml], { type: 'application/yaml' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = `${name}.yaml`;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

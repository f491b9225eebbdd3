// The configuration layer's API (backend/catalog): personas, skills, task and pane templates
// from the embedded defaults and the config dir, the problems with its files, and where they
// are. The Backend exposes one implementation as `backend.catalog`.
import { BackendError, callWails, errorMessage } from './errors';
import type { JsonRequest } from './goals';

/** The event topic of catalog reloads (a file in the config dir changed). */
export const CATALOG_TOPIC = 'catalog';

export const CATALOG_KINDS = ['personas', 'skills', 'tasks', 'templates'] as const;
export type CatalogKind = (typeof CATALOG_KINDS)[number];

export interface Persona {
  id: string;
  name: string;
  description?: string;
  capabilities?: string[];
  tools?: string[];
  skills?: string[];
  temperature?: number;
  max_tokens?: number;
  prompt: string;
  /** The file it came from, or "builtin:ID". */
  source: string;
}

export interface Skill {
  id: string;
  name: string;
  domain?: string;
  description?: string;
  prerequisites?: string[];
  body: string;
  source: string;
}

export interface TaskStep {
  title: string;
  action: string;
  criterion?: string;
}

export interface TaskParameter {
  name: string;
  question?: string;
}

export interface TaskTemplate {
  id: string;
  name: string;
  category?: string;
  description?: string;
  personas?: string[];
  steps?: TaskStep[];
  criterion: string;
  goal: string;
  parameters?: TaskParameter[];
  source: string;
}

export interface PaneTemplate {
  id: string;
  name: string;
  command: string;
  args?: string[];
  install?: string;
  description?: string;
  source: string;
}

/** A file of the config dir that did not load, and why. */
export interface CatalogProblem {
  file: string;
  line?: number;
  field?: string;
  message: string;
}

export interface CatalogListing {
  dir: string;
  folders: Record<CatalogKind, string>;
  personas: Persona[];
  skills: Skill[];
  tasks: TaskTemplate[];
  templates: PaneTemplate[];
  problems: CatalogProblem[];
}

/** A task template with its parameters filled in. */
export interface RenderedTask {
  goal: string;
  criterion: string;
  persona?: string;
  steps?: TaskStep[];
}

/** Where a kind's folder or an item's file is; `opened` when the desktop opened it. */
export interface CatalogPath {
  path: string;
  opened: boolean;
  message?: string;
}

export interface CatalogApi {
  list(): Promise<CatalogListing>;
  /** A parameter left empty is refused with a BackendError whose field is `params.NAME`. */
  renderTask(id: string, params: Record<string, string>): Promise<RenderedTask>;
  /** Opens the folder of a kind (or an item's file) on the desktop; under serve only says where. */
  open(kind: CatalogKind, id?: string): Promise<CatalogPath>;
  /** Copies a built-in into the config dir so it can be edited; resolves to the file's path. */
  customize(kind: CatalogKind, id: string): Promise<string>;
}

const arr = <T>(v: unknown): T[] => (Array.isArray(v) ? (v as T[]) : []);

export function normalizeListing(raw: unknown): CatalogListing {
  const l = (raw ?? {}) as Partial<CatalogListing>;
  return {
    dir: String(l.dir ?? ''),
    folders: (l.folders ?? {}) as Record<CatalogKind, string>,
    personas: arr<Persona>(l.personas),
    skills: arr<Skill>(l.skills),
    tasks: arr<TaskTemplate>(l.tasks).map((t) => ({ ...t, parameters: arr(t.parameters), steps: arr(t.steps) })),
    templates: arr<PaneTemplate>(l.templates),
    problems: arr<CatalogProblem>(l.problems),
  };
}

/** Request fields the catalog names in its errors. */
export const CATALOG_ERROR_FIELDS = ['task', 'kind', 'id', 'persona', 'skill'];

// ---- web transport ---------------------------------------------------------------------------

const enc = encodeURIComponent;

export class HttpCatalog implements CatalogApi {
  constructor(private readonly json: JsonRequest) {}

  async list() {
    return normalizeListing(await this.json('GET', '/api/catalog'));
  }
  renderTask(id: string, params: Record<string, string>) {
    return this.json<RenderedTask>('POST', `/api/catalog/tasks/${enc(id)}/render`, { params });
  }
  open(kind: CatalogKind, id?: string) {
    return this.json<CatalogPath>('POST', '/api/catalog/path', { kind, id: id ?? '' });
  }
  async customize(kind: CatalogKind, id: string) {
    return (await this.json<{ path: string }>('POST', '/api/catalog/customize', { kind, id })).path;
  }
}

// ---- desktop transport -----------------------------------------------------------------------

/** The bound Go methods of app_catalog.go. */
export interface WailsCatalogMethods {
  Catalog(): Promise<unknown>;
  RenderTaskTemplate(id: string, params: Record<string, string>): Promise<RenderedTask>;
  OpenCatalogPath(kind: string, id: string): Promise<CatalogPath>;
  CustomizeCatalogItem(kind: string, id: string): Promise<string>;
}

export class WailsCatalog implements CatalogApi {
  constructor(private readonly app: WailsCatalogMethods) {}

  private call<T>(fn: () => Promise<T>) {
    return callWails(fn, CATALOG_ERROR_FIELDS);
  }
  async list() {
    return normalizeListing(await this.call(() => this.app.Catalog()));
  }
  async renderTask(id: string, params: Record<string, string>) {
    try {
      return await this.app.RenderTaskTemplate(id, params);
    } catch (err) {
      // The desktop's error is text that starts with its field: "params.repo: …".
      const message = errorMessage(err);
      const m = /^(params\.[A-Za-z0-9_]+): /.exec(message);
      if (m) throw new BackendError(message, { field: m[1] });
      return callWails(() => Promise.reject(err), CATALOG_ERROR_FIELDS);
    }
  }
  open(kind: CatalogKind, id?: string) {
    return this.call(() => this.app.OpenCatalogPath(kind, id ?? ''));
  }
  customize(kind: CatalogKind, id: string) {
    return this.call(() => this.app.CustomizeCatalogItem(kind, id));
  }
}

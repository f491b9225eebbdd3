// The configuration layer's API (backend/catalog): personas, skills, task and pane templates
// from the embedded defaults and the config dir, the problems with its files, and where they
// are. Its types are generated from Go (gen/catalog.ts); the Backend exposes the calls of the
// table as `backend.catalog`.
import type * as api from './gen/api';
import type * as catalog from './gen/catalog';
import type { Call } from './table';

/** The event topic of catalog reloads (a file in the config dir changed). */
export const CATALOG_TOPIC = 'catalog';

export const CATALOG_KINDS = ['personas', 'skills', 'tasks', 'templates'] as const;
export type CatalogKind = (typeof CATALOG_KINDS)[number];

export type Persona = catalog.Persona;
export type TaskTemplate = catalog.Task;
/** A file of the config dir that did not load, and why. */
export type CatalogProblem = catalog.Problem;
/** Go's folders are a map by kind; it holds every kind. */
export type CatalogListing = Omit<catalog.Listing, 'folders'> & { folders: Record<CatalogKind, string> };
/** A task template with its parameters filled in. */
export type RenderedTask = catalog.Rendered;
/** Where a kind's folder or an item's file is; `opened` when the desktop opened it. */
export type CatalogPath = api.CatalogPath;

/** An empty listing, for before the first load. */
export function emptyListing(): CatalogListing {
  return {
    dir: '',
    folders: { personas: '', skills: '', tasks: '', templates: '' },
    personas: [],
    skills: [],
    tasks: [],
    templates: [],
    problems: [],
  };
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

/**
 * The catalog's calls over a transport's Call. `open` is the transport's when it can open a
 * file (the desktop); else the table's CatalogPath says where the file is.
 */
export class CatalogCalls implements CatalogApi {
  constructor(
    private readonly call: Call,
    private readonly opener?: (kind: CatalogKind, id: string) => Promise<CatalogPath>,
  ) {}

  async list() {
    return (await this.call('Catalog', {})) as CatalogListing;
  }
  renderTask(id: string, params: Record<string, string>) {
    return this.call('RenderTaskTemplate', { id, params });
  }
  open(kind: CatalogKind, id = '') {
    return this.opener ? this.opener(kind, id) : this.call('CatalogPath', { kind, id });
  }
  async customize(kind: CatalogKind, id: string) {
    return (await this.call('CustomizeCatalogItem', { kind, id })).path;
  }
}

import {
  CATALOG_TOPIC,
  emptyListing,
  type Backend,
  type CatalogKind,
  type CatalogListing,
  type CatalogPath,
  type RenderedTask,
} from '../api';
import { followBackend } from './follow';
import { attempt } from './load';

/**
 * The configuration layer as the backend last listed it: personas, skills, task and pane
 * templates, and the problems with the config dir's files. Loaded when first needed (the New
 * Goal dialog, Settings); from then on a reload on the backend (a file changed) re-reads it.
 */
export class CatalogStore {
  listing = $state.raw<CatalogListing>(emptyListing());
  loaded = $state(false);
  /** Why the last load failed; '' after a success. */
  loadError = $state('');

  private stop: (() => void) | null = null;

  constructor(private readonly backend: Backend) {}

  async load(): Promise<void> {
    if (!this.stop && typeof this.backend.subscribe === 'function') {
      this.stop = followBackend(
        this.backend,
        (e) => {
          if (e.topic === CATALOG_TOPIC) void this.load();
        },
        (first) => {
          if (!first) void this.load();
        },
      );
    }
    this.loadError = await attempt(async () => {
      this.listing = await this.backend.catalog.list();
      this.loaded = true;
    });
  }

  /** A task template with its parameters filled; an empty one is refused naming `params.NAME`. */
  render(id: string, params: Record<string, string>): Promise<RenderedTask> {
    return this.backend.catalog.renderTask(id, params);
  }

  /** Opens a kind's folder or an item's file on the desktop; under serve, says where it is. */
  open(kind: CatalogKind, id?: string): Promise<CatalogPath> {
    return this.backend.catalog.open(kind, id);
  }

  /** Copies a built-in into the config dir to edit it; the reload event then lists the file. */
  async customize(kind: CatalogKind, id: string): Promise<string> {
    const path = await this.backend.catalog.customize(kind, id);
    await this.load();
    return path;
  }

  /** Stops following the backend (the app's end; tests). */
  dispose(): void {
    this.stop?.();
    this.stop = null;
  }
}

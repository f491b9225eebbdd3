import type {
  Backend,
  BackendEvent,
  BusyPane,
  PanePatch,
  Workspace,
  WorkspaceList,
} from '../api';
import { busyPanes } from '../api';
import { markStartup } from '../startup/marks';
import { followBackend, isRecord } from './follow';
import { mergeList, withNewer } from './versions';

/** The event topic whose data is a full WorkspaceList snapshot. */
export const WORKSPACES_TOPIC = 'workspaces';

/**
 * The workspaces as the backend last told us, from two sources: pushed event snapshots and the
 * results of our own calls. Both can arrive in either order, so neither may roll a workspace
 * back: a workspace is only replaced by a version whose updatedAt is not older.
 */
export class WorkspaceStore {
  /** Ordered by position. Replaced wholesale, never mutated, so $state.raw is enough. */
  workspaces = $state.raw<Workspace[]>([]);
  activeId = $state('');
  /** True once the first list has arrived; the shell renders only then. */
  loaded = $state(false);
  /** Why the last full read failed; null after one succeeds (the start screen offers Retry then). */
  loadError = $state<string | null>(null);

  active: Workspace | undefined = $derived(
    this.workspaces.find((w) => w.id === this.activeId) ?? this.workspaces[0],
  );

  /** Counts event snapshots, so a list fetched before the newest event is not applied over it. */
  private eventsSeen = 0;

  constructor(
    private readonly backend: Backend,
    private readonly report: (err: unknown) => void,
    /**
     * Asks the person whether to end the work in progress a removal would interrupt; without
     * it such removals are refused (the backend's message is reported).
     */
    private readonly confirmBusy: (title: string, busy: BusyPane[]) => Promise<boolean> = async () => false,
  ) {}

  /**
   * Follows backend events, and re-reads the list whenever the live connection (re)opens, since
   * events sent while it was down are gone. Returns the stop function.
   */
  sync(): () => void {
    return followBackend(
      this.backend,
      (e) => this.handleEvent(e),
      () => void this.load(),
    );
  }

  handleEvent(e: BackendEvent): void {
    if (e.topic !== WORKSPACES_TOPIC) return;
    if (!isWorkspaceList(e.data)) {
      console.warn('clusterspace: workspaces event without a WorkspaceList', e);
      return;
    }
    this.eventsSeen++;
    this.applySnapshot(e.data);
  }

  /** Reads the whole list from the backend. */
  async load(): Promise<void> {
    const seenBefore = this.eventsSeen;
    try {
      markStartup('list-asked');
      const list = await this.backend.listWorkspaces();
      markStartup('list-answered');
      // An event that arrived meanwhile is a full snapshot at least as new as this answer.
      if (this.eventsSeen === seenBefore) this.applySnapshot(list);
      this.loadError = null;
    } catch (err) {
      this.loadError = err instanceof Error ? err.message : String(err);
      this.report(err);
    }
  }

  /** Membership, order and the active workspace come from the snapshot; no workspace goes back in time. */
  applySnapshot(list: WorkspaceList): void {
    this.workspaces = mergeList(this.workspaces, list.workspaces);
    this.activeId = list.activeId;
    this.loaded = true;
  }

  /**
   * Applies one workspace returned by a call. `insert` is for calls that create one; for the rest
   * a workspace that is gone (deleted meanwhile) stays gone.
   */
  applyWorkspace(ws: Workspace, insert = false): void {
    if (insert && !this.workspaces.some((w) => w.id === ws.id)) {
      this.workspaces = [...this.workspaces, ws].sort((a, b) => a.position - b.position);
    } else {
      this.workspaces = withNewer(this.workspaces, ws);
    }
  }

  byId(id: string): Workspace | undefined {
    return this.workspaces.find((w) => w.id === id);
  }

  // ---- actions: each reports its own failure and resolves to undefined then ---------------

  async create(name = ''): Promise<Workspace | undefined> {
    const ws = await this.attempt(() => this.backend.createWorkspace(name));
    if (!ws) return undefined;
    this.applyWorkspace(ws, true);
    await this.activate(ws.id);
    return ws;
  }

  async rename(id: string, name: string): Promise<Workspace | undefined> {
    return this.applied(() => this.backend.renameWorkspace(id, name));
  }

  async remove(id: string): Promise<boolean> {
    const name = this.byId(id)?.name ?? 'workspace';
    const ok = await this.confirmingBusy(`Close "${name}" and end its work?`, async (force) => {
      await this.backend.deleteWorkspace(id, force);
      return true;
    });
    if (!ok) return false;
    this.workspaces = this.workspaces.filter((w) => w.id !== id);
    // The backend picks the next active workspace; read its choice rather than guess it.
    await this.load();
    return true;
  }

  async activate(id: string): Promise<void> {
    const ok = await this.attempt(async () => {
      await this.backend.activateWorkspace(id);
      return true;
    });
    if (ok && this.byId(id)) this.activeId = id;
  }

  /** Moves to the workspace `step` places away from the active one, wrapping around. */
  async cycle(step: number): Promise<void> {
    const n = this.workspaces.length;
    if (n < 2 || !this.active) return;
    const i = this.workspaces.indexOf(this.active);
    await this.activate(this.workspaces[(((i + step) % n) + n) % n].id);
  }

  /** Activates the Nth workspace (1-based), if there is one. */
  async activateNth(n: number): Promise<void> {
    const ws = this.workspaces[n - 1];
    if (ws) await this.activate(ws.id);
  }

  /** Removed panes end what they hold; when something in them is busy the person is asked first. */
  async setGrid(id: string, rows: number, cols: number): Promise<Workspace | undefined> {
    const ws = await this.confirmingBusy(`Shrink the grid to ${rows} × ${cols} and end this work?`, (force) =>
      this.backend.setGrid(id, rows, cols, force),
    );
    if (ws) this.applyWorkspace(ws);
    return ws;
  }

  setWeights(id: string, rowWeights: number[], colWeights: number[]): Promise<Workspace | undefined> {
    return this.applied(() => this.backend.setWeights(id, rowWeights, colWeights));
  }

  swapPanes(id: string, paneA: string, paneB: string): Promise<Workspace | undefined> {
    return this.applied(() => this.backend.swapPanes(id, paneA, paneB));
  }

  updatePane(id: string, paneId: string, patch: PanePatch): Promise<Workspace | undefined> {
    return this.applied(() => this.backend.updatePane(id, paneId, patch));
  }

  async exportWorkspace(id: string): Promise<void> {
    await this.attempt(async () => {
      await this.backend.exportWorkspace(id);
      return true;
    });
  }

  async importWorkspace(json: string): Promise<Workspace | undefined> {
    const ws = await this.attempt(() => this.backend.importWorkspace(json));
    if (!ws) return undefined;
    this.applyWorkspace(ws, true);
    await this.activate(ws.id);
    return ws;
  }

  private async applied(call: () => Promise<Workspace>): Promise<Workspace | undefined> {
    const ws = await this.attempt(call);
    if (ws) this.applyWorkspace(ws);
    return ws;
  }

  /** Runs a removal; if the backend refuses it over busy panes, asks, then forces it. */
  private async confirmingBusy<T>(title: string, call: (force: boolean) => Promise<T>): Promise<T | undefined> {
    try {
      return await call(false);
    } catch (err) {
      const busy = busyPanes(err);
      if (!busy) {
        this.report(err);
        return undefined;
      }
      if (!(await this.confirmBusy(title, busy))) return undefined;
      return this.attempt(() => call(true));
    }
  }

  private async attempt<T>(call: () => Promise<T>): Promise<T | undefined> {
    try {
      return await call();
    } catch (err) {
      this.report(err);
      return undefined;
    }
  }
}

function isWorkspaceList(v: unknown): v is WorkspaceList {
  return isRecord(v) && Array.isArray(v.workspaces) && typeof v.activeId === 'string';
}

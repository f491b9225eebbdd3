import {
  BackendError,
  type Backend,
  type ConvertRequest,
  type LaunchTemplate,
  type Pane,
  type PaneKind,
  type PaneLaunch,
  type Workspace,
} from '../api';
import type { Dialogs } from './dialogs.svelte';
import { convertQuestion, neighbourPane, type Direction } from './paneNav';
import type { WorkspaceStore } from './workspaces.svelte';
import { attempt, SharedRead } from './load';

/**
 * How long a focus change waits before it is sent: clicking or Alt+Arrow-ing across several
 * panes sends only where focus came to rest.
 */
export const FOCUS_DEBOUNCE_MS = 120;

/** What a pane's menu should open with when something other than its button asks for it. */
export interface PaneMenuRequest {
  paneId: string;
  view: 'main' | 'start-as';
}

/**
 * Pane controls the backend holds, so the agent sees and steers them as the person does: which
 * pane has focus, which one is maximized, what a pane is and what a terminal pane launches.
 *
 * The focused pane shown is the backend's, except while a focus change of ours is waiting or in
 * flight: then it is ours, so an older event cannot pull the highlight (and the keyboard) back.
 */
export class PaneStore {
  /** Workspace id → the pane we are focusing and have not heard back about. */
  private pendingFocus = $state.raw<Record<string, string>>({});
  /** Built-in launch templates, as last read; empty until the first read. */
  templates = $state.raw<LaunchTemplate[]>([]);
  templatesLoaded = $state(false);
  /** Why the last read of the templates failed ('' when it did not). */
  templatesError = $state('');
  /** A pane menu someone asked to open (the palette's "Start Pane as…"); the menu clears it. */
  menuRequest = $state<PaneMenuRequest | null>(null);

  private readonly timers = new Map<string, ReturnType<typeof setTimeout>>();
  private readonly inFlight = new Map<string, number>();
  private readonly templatesLoading = new SharedRead();
  private templatesTried = false;

  constructor(
    private readonly backend: Backend,
    private readonly workspaces: WorkspaceStore,
    private readonly dialogs: Dialogs,
    private readonly report: (err: unknown) => void,
  ) {}

  // ---- focus and maximize --------------------------------------------------------------------

  /** The focused pane of the workspace ('' for none): ours while a change is pending. */
  focusedPaneId(ws: Workspace): string {
    const pending = this.pendingFocus[ws.id];
    if (pending !== undefined) return pending;
    return paneOf(ws, ws.focusedPaneId);
  }

  /** True while a focus change of ours for the workspace has not been answered. */
  focusPending(wsId: string): boolean {
    return this.pendingFocus[wsId] !== undefined;
  }

  /** The maximized pane ('' for none): a pane the grid no longer holds counts as none. */
  maximizedPaneId(ws: Workspace): string {
    return paneOf(ws, ws.maximizedPaneId);
  }

  /**
   * The person focused a pane: tell the backend (debounced), so the agent knows where they are.
   * Focusing the pane that already has focus sends nothing, which is what keeps the UI from
   * echoing back a focus change the backend announced.
   */
  focus(wsId: string, paneId: string): void {
    const ws = this.workspaces.byId(wsId);
    if (!ws || !paneOf(ws, paneId) || this.focusedPaneId(ws) === paneId) return;
    this.pendingFocus = { ...this.pendingFocus, [wsId]: paneId };
    clearTimeout(this.timers.get(wsId));
    this.timers.set(
      wsId,
      setTimeout(() => {
        this.timers.delete(wsId);
        void this.sendFocus(wsId, paneId);
      }, FOCUS_DEBOUNCE_MS),
    );
  }

  private async sendFocus(wsId: string, paneId: string): Promise<void> {
    const n = (this.inFlight.get(wsId) ?? 0) + 1;
    this.inFlight.set(wsId, n);
    try {
      this.workspaces.applyWorkspace(await this.backend.focusPane(wsId, paneId));
    } catch (err) {
      this.report(err);
    } finally {
      // Only the newest answer, with nothing newer waiting, hands the focus back to the backend's.
      if (this.inFlight.get(wsId) === n && !this.timers.has(wsId)) {
        const { [wsId]: _, ...rest } = this.pendingFocus;
        this.pendingFocus = rest;
      }
    }
  }

  /** Shows the pane alone, filling the grid, or the whole grid again. */
  async toggleMaximize(wsId: string, paneId: string): Promise<Workspace | undefined> {
    try {
      const ws = await this.backend.toggleMaximizePane(wsId, paneId);
      this.workspaces.applyWorkspace(ws);
      return ws;
    } catch (err) {
      this.report(err);
      return undefined;
    }
  }

  /** Ctrl+Enter: maximizes the focused pane, or restores the grid. */
  async toggleMaximizeFocused(wsId: string): Promise<void> {
    const ws = this.workspaces.byId(wsId);
    if (!ws) return;
    const paneId = this.focusedPaneId(ws) || this.maximizedPaneId(ws) || ws.panes[0]?.id;
    if (paneId) await this.toggleMaximize(wsId, paneId);
  }

  /**
   * Alt+Arrow: focus moves to the neighbouring pane. While a pane is maximized the neighbour
   * fills the grid instead (one call: maximizing also focuses), so the person stays zoomed in.
   * Returns the pane that now has focus, if focus moved.
   */
  move(wsId: string, dir: Direction): Pane | undefined {
    const ws = this.workspaces.byId(wsId);
    if (!ws) return undefined;
    const maximized = this.maximizedPaneId(ws);
    const from = maximized || this.focusedPaneId(ws);
    const next = neighbourPane(ws, from, dir);
    if (!next || next.id === from) return undefined;
    if (maximized) void this.toggleMaximize(wsId, next.id);
    else this.focus(wsId, next.id);
    return next;
  }

  // ---- what a pane is and runs ---------------------------------------------------------------

  /**
   * Turns the pane into the other kind. When the backend says something runs in it, the person
   * is asked first (what runs is named) and the call is sent again with force; any other refusal
   * is reported as the backend worded it. Resolves to the changed workspace, or undefined when
   * nothing changed.
   */
  async convert(wsId: string, paneId: string, req: ConvertRequest): Promise<Workspace | undefined> {
    try {
      const ws = await this.backend.convertPane(wsId, paneId, req);
      this.workspaces.applyWorkspace(ws);
      return ws;
    } catch (err) {
      if (!(err instanceof BackendError) || err.field !== 'force' || req.force) {
        this.report(err);
        return undefined;
      }
      const ok = await this.dialogs.confirm({
        title: req.kind === 'browser' ? 'Convert to a browser pane' : 'Convert to a terminal pane',
        message: convertQuestion(req.kind, err.busy?.flatMap((p) => p.busy), err.message),
        confirmLabel: 'Convert anyway',
      });
      return ok ? this.convert(wsId, paneId, { ...req, force: true }) : undefined;
    }
  }

  /**
   * Sets what a terminal pane runs (null: the shell); the backend restarts its terminal. When
   * a command runs in it, the person is asked first (what runs is named), as for convert.
   */
  async setLaunch(wsId: string, paneId: string, launch: PaneLaunch | null, force = false): Promise<Workspace | undefined> {
    try {
      const ws = await this.backend.setPaneLaunch(wsId, paneId, launch, force);
      this.workspaces.applyWorkspace(ws);
      return ws;
    } catch (err) {
      if (!(err instanceof BackendError) || err.field !== 'force' || force) {
        this.report(err);
        return undefined;
      }
      const ok = await this.dialogs.confirm({
        title: 'Restart the pane',
        message: convertQuestion('terminal', err.busy?.flatMap((p) => p.busy), err.message),
        confirmLabel: 'Restart anyway',
      });
      return ok ? this.setLaunch(wsId, paneId, launch, true) : undefined;
    }
  }

  /**
   * "Start as <template>": a terminal pane gets the template as its launch (keeping its
   * directory and environment); a browser pane becomes a terminal pane started from it. `custom`
   * is the command line's words for the custom template.
   */
  async startAs(wsId: string, pane: Pane, templateId: string, custom?: string[]): Promise<Workspace | undefined> {
    const launch: PaneLaunch = { template: templateId };
    if (custom?.length) {
      launch.command = custom[0];
      if (custom.length > 1) launch.args = custom.slice(1);
    }
    if (pane.kind === 'terminal') {
      if (pane.launch?.dir) launch.dir = pane.launch.dir;
      if (pane.launch?.env?.length) launch.env = pane.launch.env;
      return this.setLaunch(wsId, pane.id, launch);
    }
    if (!custom?.length) return this.convert(wsId, pane.id, { kind: 'terminal', template: templateId });
    // Converting takes a template but no command: convert, then give it the command.
    const converted = await this.convert(wsId, pane.id, { kind: 'terminal' });
    return converted ? this.setLaunch(wsId, pane.id, launch) : undefined;
  }

  /** Reads the templates (again: whether a command is installed may have changed). */
  loadTemplates(): Promise<void> {
    this.templatesTried = true;
    return this.templatesLoading.run(async () => {
      // A failure is shown in the menu that asked; the palette simply offers no templates.
      this.templatesError = await attempt(async () => {
        this.templates = await this.backend.launchTemplates();
        this.templatesLoaded = true;
      });
    });
  }

  /** The templates for a synchronous list (the palette): what is known now, read once if never. */
  knownTemplates(): LaunchTemplate[] {
    if (!this.templatesTried) void this.loadTemplates();
    return this.templates;
  }

  /** Drops pending timers (the app is going away). */
  dispose(): void {
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }
}

/** The id if the workspace holds that pane, else ''. */
function paneOf(ws: Workspace, id: string | undefined): string {
  return id && ws.panes.some((p) => p.id === id) ? id : '';
}

/** The other kind, the one "Convert" turns a pane into. */
export function otherKind(kind: PaneKind): PaneKind {
  return kind === 'terminal' ? 'browser' : 'terminal';
}

import {
  parseTerminalEvent,
  tabKey,
  type Backend,
  type TabInfo,
  type TerminalEvent,
} from '../api';
import { applyPaneTabEvent, ListenerMap, PaneTabStore } from './paneTabs.svelte';

/** Receives a tab's output: bytes to write, after a reset of the screen when `resync` is set. */
export type OutputListener = (data: Uint8Array, resync: boolean) => void;

/**
 * Terminal tabs per pane and the panes included in broadcast, as the backend last told us, plus
 * the routing of output bytes to the views that attached. Output never touches reactive state:
 * it goes straight from the event to the view's xterm.
 */
export class TerminalStore extends PaneTabStore<TabInfo, TerminalEvent> {
  /** Panes whose typing is broadcast (and which receive broadcast typing). */
  broadcast = $state.raw<ReadonlySet<string>>(new Set());
  /** The terminal pane that last had focus: the palette's commands act on it. */
  lastPaneId = $state<string | null>(null);

  private readonly listeners = new ListenerMap<OutputListener>();

  constructor(
    backend: Backend,
    private readonly report: (err: unknown) => void,
  ) {
    super(backend, false, parseTerminalEvent);
  }

  apply(ev: TerminalEvent): void {
    switch (ev.type) {
      case 'output':
        this.listeners.each(tabKey(ev.paneId, ev.tabId), (fn) => fn(ev.data, ev.resync));
        return;
      case 'broadcast':
        this.setBroadcastFlag(ev.paneId, ev.include);
        return;
      case 'tab':
        this.tabEvent(ev.tab.paneId, ev.kind, ev.tab);
        return;
    }
  }

  isBroadcast(paneId: string): boolean {
    return this.broadcast.has(paneId);
  }

  /** How many of these panes are included in broadcast. */
  broadcastCount(paneIds: readonly string[]): number {
    return paneIds.filter((id) => this.broadcast.has(id)).length;
  }

  // ---- calls: each reports its own failure (except open, whose caller shows it in the pane) --

  /** Starts the pane's first shell if it has none. Rejects, for the pane to show why. */
  open(paneId: string, cols: number, rows: number): Promise<TabInfo[]> {
    return this.openWith(paneId, () => this.backend.terminalOpen(paneId, cols, rows));
  }

  async newTab(paneId: string, cols: number, rows: number): Promise<TabInfo | undefined> {
    const tab = await this.attempt(paneId, () => this.backend.terminalNewTab(paneId, cols, rows));
    if (tab) this.addOpened(paneId, tab);
    return tab;
  }

  /** A new tab connected to a saved SSH server (inside the pane's tmux session there). */
  async openSSH(paneId: string, serverId: string, cols: number, rows: number): Promise<TabInfo | undefined> {
    const tab = await this.attempt(paneId, () => this.backend.terminalOpenSSH(paneId, serverId, cols, rows));
    if (tab) this.addOpened(paneId, tab);
    return tab;
  }

  async activate(paneId: string, tabId: string): Promise<void> {
    await this.activateWith(paneId, tabId, () => this.backend.terminalActivate(paneId, tabId));
  }

  closeTab(paneId: string, tabId: string): Promise<void> {
    return this.closeWith(paneId, tabId, () => this.backend.terminalCloseTab(paneId, tabId));
  }

  async restart(paneId: string, tabId: string): Promise<void> {
    await this.attempt(paneId, async () => {
      await this.backend.terminalRestart(paneId, tabId);
      return true;
    });
  }

  async setBroadcast(paneId: string, include: boolean): Promise<void> {
    const ok = await this.attempt(paneId, async () => {
      await this.backend.terminalSetBroadcast(paneId, include);
      return true;
    });
    if (ok) this.setBroadcastFlag(paneId, include);
  }

  toggleBroadcast(paneId: string): Promise<void> {
    return this.setBroadcast(paneId, !this.isBroadcast(paneId));
  }

  // ---- what a view needs -------------------------------------------------------------------

  /** Routes the tab's output to `fn` until the returned function is called. */
  onOutput(paneId: string, tabId: string, fn: OutputListener): () => void {
    return this.listeners.add(tabKey(paneId, tabId), fn);
  }

  attach(paneId: string, tabId: string): Promise<Uint8Array> {
    return this.backend.terminalAttach(paneId, tabId);
  }

  /** Best effort: the tab may be gone already (closed, or its pane removed). */
  detach(paneId: string, tabId: string): void {
    this.backend.terminalDetach(paneId, tabId).catch(() => {});
  }

  input(paneId: string, tabId: string, data: string): void {
    this.backend.terminalInput(paneId, tabId, data);
  }

  resize(paneId: string, tabId: string, cols: number, rows: number): void {
    this.backend.terminalResize(paneId, tabId, cols, rows);
  }

  // ---- internals ---------------------------------------------------------------------------

  protected fetchTabs(paneId: string): Promise<TabInfo[]> {
    return this.backend.terminalTabs(paneId);
  }

  /** A failed call goes to the app's banner. */
  protected fail(_paneId: string, err: unknown): void {
    this.report(err);
  }

  /**
   * A tab a call opened, which the backend makes the pane's active one. Its events may have
   * come first (an SSH tab that cannot connect has exited by the time the call answers): then
   * what they said is newer than the call's answer, and only the active mark is taken.
   */
  private addOpened(paneId: string, tab: TabInfo): void {
    const known = this.tabs(paneId).find((t) => t.tabId === tab.tabId);
    this.applyTab(paneId, 'opened', { ...(known ?? tab), active: true });
  }

  /** Tabs fetched from the backend also say whether the pane is in broadcast (after a reload
   * this is the only way to learn it). Events carry single tabs and leave the flag alone. */
  protected received(paneId: string, tabs: TabInfo[]): void {
    this.setTabs(paneId, tabs);
    if (tabs.length > 0 && tabs[0].broadcast !== undefined) this.setBroadcastFlag(paneId, tabs[0].broadcast);
  }

  private setBroadcastFlag(paneId: string, include: boolean): void {
    if (this.broadcast.has(paneId) === include) return;
    const next = new Set(this.broadcast);
    if (include) next.add(paneId);
    else next.delete(paneId);
    this.broadcast = next;
  }
}

/** A pane's terminal tabs after one event; an 'activated' event only moves the active mark. */
export function applyTabEvent(tabs: readonly TabInfo[], kind: string, tab: TabInfo): TabInfo[] {
  return applyPaneTabEvent(tabs, kind, tab, false);
}

import {
  parseTerminalEvent,
  tabKey,
  type Backend,
  type BackendEvent,
  type TabInfo,
  type TerminalEvent,
} from '../api';
import { followBackend } from './follow';

/** Receives a tab's output: bytes to write, after a reset of the screen when `resync` is set. */
export type OutputListener = (data: Uint8Array, resync: boolean) => void;

/**
 * Terminal tabs per pane and the panes included in broadcast, as the backend last told us, plus
 * the routing of output bytes to the views that attached. Output never touches reactive state:
 * it goes straight from the event to the view's xterm.
 */
export class TerminalStore {
  /** paneId → its tabs, in the backend's order. Replaced wholesale, never mutated. */
  private panes = $state.raw<Record<string, TabInfo[]>>({});
  /** Panes whose typing is broadcast (and which receive broadcast typing). */
  broadcast = $state.raw<ReadonlySet<string>>(new Set());
  /** The terminal pane that last had focus: the palette's commands act on it. */
  lastPaneId = $state<string | null>(null);

  private readonly listeners = new Map<string, Set<OutputListener>>();
  /** Counts tab events per pane, so a call's older tab list is not applied over a newer event. */
  private readonly paneEvents = new Map<string, number>();

  constructor(
    private readonly backend: Backend,
    private readonly report: (err: unknown) => void,
  ) {}

  /**
   * Follows terminal events, and re-reads the tabs of known panes whenever the live connection
   * (re)opens, since events sent while it was down are gone. Returns the stop function.
   */
  sync(): () => void {
    return followBackend(
      this.backend,
      (e) => this.handleEvent(e),
      (first) => {
        if (!first) for (const paneId of Object.keys(this.panes)) void this.refresh(paneId);
      },
    );
  }

  handleEvent(e: BackendEvent): void {
    const ev = parseTerminalEvent(e);
    if (ev) this.apply(ev);
  }

  apply(ev: TerminalEvent): void {
    switch (ev.type) {
      case 'output': {
        const set = this.listeners.get(tabKey(ev.paneId, ev.tabId));
        if (set) for (const fn of [...set]) fn(ev.data, ev.resync);
        return;
      }
      case 'broadcast':
        this.setBroadcastFlag(ev.paneId, ev.include);
        return;
      case 'tab':
        this.paneEvents.set(ev.tab.paneId, (this.paneEvents.get(ev.tab.paneId) ?? 0) + 1);
        this.setTabs(ev.tab.paneId, applyTabEvent(this.tabs(ev.tab.paneId), ev.kind, ev.tab));
        return;
    }
  }

  tabs(paneId: string): TabInfo[] {
    return this.panes[paneId] ?? EMPTY;
  }

  /** The tab the pane shows: the backend's active one, else the first. */
  activeTab(paneId: string): TabInfo | undefined {
    const tabs = this.tabs(paneId);
    return tabs.find((t) => t.active) ?? tabs[0];
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
  async open(paneId: string, cols: number, rows: number): Promise<TabInfo[]> {
    const seen = this.paneEvents.get(paneId) ?? 0;
    const tabs = await this.backend.terminalOpen(paneId, cols, rows);
    if ((this.paneEvents.get(paneId) ?? 0) === seen) this.setFetchedTabs(paneId, tabs);
    else await this.refresh(paneId); // an event came in meanwhile: ask again rather than guess
    return this.tabs(paneId);
  }

  async refresh(paneId: string): Promise<void> {
    const seen = this.paneEvents.get(paneId) ?? 0;
    try {
      const tabs = await this.backend.terminalTabs(paneId);
      if ((this.paneEvents.get(paneId) ?? 0) === seen) this.setFetchedTabs(paneId, tabs);
    } catch (err) {
      this.report(err);
    }
  }

  async newTab(paneId: string, cols: number, rows: number): Promise<TabInfo | undefined> {
    const tab = await this.attempt(() => this.backend.terminalNewTab(paneId, cols, rows));
    if (tab) this.addOpened(paneId, tab);
    return tab;
  }

  /** A new tab connected to a saved SSH server (inside the pane's tmux session there). */
  async openSSH(paneId: string, serverId: string, cols: number, rows: number): Promise<TabInfo | undefined> {
    const tab = await this.attempt(() => this.backend.terminalOpenSSH(paneId, serverId, cols, rows));
    if (tab) this.addOpened(paneId, tab);
    return tab;
  }

  async activate(paneId: string, tabId: string): Promise<void> {
    const tab = this.tabs(paneId).find((t) => t.tabId === tabId);
    // Shown at once; the backend's 'activated' event confirms it.
    if (tab) this.setTabs(paneId, applyTabEvent(this.tabs(paneId), 'activated', tab));
    await this.attempt(() => this.backend.terminalActivate(paneId, tabId));
  }

  async closeTab(paneId: string, tabId: string): Promise<void> {
    const ok = await this.attempt(async () => {
      await this.backend.terminalCloseTab(paneId, tabId);
      return true;
    });
    const tab = this.tabs(paneId).find((t) => t.tabId === tabId);
    if (ok && tab) this.setTabs(paneId, applyTabEvent(this.tabs(paneId), 'closed', tab));
  }

  async restart(paneId: string, tabId: string): Promise<void> {
    await this.attempt(async () => {
      await this.backend.terminalRestart(paneId, tabId);
      return true;
    });
  }

  async setBroadcast(paneId: string, include: boolean): Promise<void> {
    const ok = await this.attempt(async () => {
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
    const key = tabKey(paneId, tabId);
    let set = this.listeners.get(key);
    if (!set) {
      set = new Set();
      this.listeners.set(key, set);
    }
    set.add(fn);
    return () => {
      const s = this.listeners.get(key);
      s?.delete(fn);
      if (s?.size === 0) this.listeners.delete(key);
    };
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

  /**
   * A tab a call opened, which the backend makes the pane's active one. Its events may have
   * come first (an SSH tab that cannot connect has exited by the time the call answers): then
   * what they said is newer than the call's answer, and only the active mark is taken.
   */
  private addOpened(paneId: string, tab: TabInfo): void {
    const known = this.tabs(paneId).find((t) => t.tabId === tab.tabId);
    this.setTabs(paneId, applyTabEvent(this.tabs(paneId), 'opened', { ...(known ?? tab), active: true }));
  }

  private setTabs(paneId: string, tabs: TabInfo[]): void {
    this.panes = { ...this.panes, [paneId]: tabs };
  }

  /** Tabs fetched from the backend also say whether the pane is in broadcast (after a reload
   * this is the only way to learn it). Events carry single tabs and leave the flag alone. */
  private setFetchedTabs(paneId: string, tabs: TabInfo[]): void {
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

  private async attempt<T>(call: () => Promise<T>): Promise<T | undefined> {
    try {
      return await call();
    } catch (err) {
      this.report(err);
      return undefined;
    }
  }
}

const EMPTY: TabInfo[] = [];

/**
 * A pane's tabs after one event. The tab in an event is the backend's full view of it; only
 * 'activated' (and an 'opened' tab that is active) moves the active mark. When the active tab
 * closes, the backend makes its neighbour active without an event of its own, so that is
 * mirrored here: the tab now at the closed one's index, else the last.
 */
export function applyTabEvent(tabs: readonly TabInfo[], kind: string, tab: TabInfo): TabInfo[] {
  const i = tabs.findIndex((t) => t.tabId === tab.tabId);
  switch (kind) {
    case 'closed': {
      if (i === -1) return tabs.slice();
      const rest = tabs.filter((t) => t.tabId !== tab.tabId);
      if (tabs[i].active && rest.length) {
        const next = rest[Math.min(i, rest.length - 1)];
        return rest.map((t) => (t.tabId === next.tabId ? { ...t, active: true } : t));
      }
      return rest;
    }
    case 'activated':
      return withActive(i === -1 ? [...tabs, tab] : tabs, tab.tabId);
    default: {
      // opened, exited, restarted, title: take the new state; keep our active mark unless the
      // event says this tab is active (its snapshot may predate a later activation).
      const held = i === -1 ? undefined : tabs[i];
      const next = { ...tab, active: tab.active || (held?.active ?? false) };
      const list = i === -1 ? [...tabs, next] : tabs.map((t, j) => (j === i ? next : t));
      return next.active ? withActive(list, next.tabId) : list;
    }
  }
}

function withActive(tabs: readonly TabInfo[], tabId: string): TabInfo[] {
  return tabs.map((t) => (t.active === (t.tabId === tabId) ? t : { ...t, active: t.tabId === tabId }));
}

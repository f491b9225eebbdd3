import type { Backend, BackendEvent } from '../api';
import { followBackend } from './follow';

/** What a pane's tab list needs of a tab: terminal and browser tabs both have these. */
export interface PaneTab {
  tabId: string;
  active: boolean;
}

/**
 * The tabs per pane as the backend last told us, shared by the terminal and browser stores: the
 * lists, their events, and the race between a call's answer and an event that came meanwhile.
 * A subclass says how its events arrive, how it reads a pane's tabs and where a failure shows.
 */
export abstract class PaneTabStore<T extends PaneTab, E> {
  /** paneId → its tabs, in the backend's order. Replaced wholesale, never mutated. */
  private panes = $state.raw<Record<string, T[]>>({});
  /** Counts tab events per pane, so a call's older tab list is not applied over a newer event. */
  private readonly paneEvents = new Map<string, number>();

  /**
   * @param replaceOnActivate whether an 'activated' event also brings the tab's new state
   * (browser tabs), or only moves the active mark (terminal tabs).
   * @param parse the store's own event out of a backend event (null: not one of its own).
   */
  protected constructor(
    protected readonly backend: Backend,
    private readonly replaceOnActivate: boolean,
    private readonly parse: (e: BackendEvent) => E | null,
  ) {}

  handleEvent(e: BackendEvent): void {
    const ev = this.parse(e);
    if (ev) this.apply(ev);
  }

  /** Acts on one of the store's own events. */
  abstract apply(ev: E): void;
  /** The backend's current tab list of the pane. */
  protected abstract fetchTabs(paneId: string): Promise<T[]>;
  /** Shows a failed call's error where it belongs. */
  protected abstract fail(paneId: string, err: unknown): void;
  /** Makes the tab the one the pane shows (see activateWith). */
  abstract activate(paneId: string, tabId: string): Promise<void>;
  /** Ends the tab and what runs in it (see closeWith). */
  abstract closeTab(paneId: string, tabId: string): Promise<void>;

  /**
   * Follows the backend's events, and re-reads the tabs of known panes whenever the live
   * connection reopens (events sent while it was down are gone; the transport watches again by
   * itself). Returns the stop function.
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

  tabs(paneId: string): T[] {
    return this.panes[paneId] ?? (EMPTY as T[]);
  }

  /** Whether the pane's tabs were ever read (open answered, or an event named the pane). */
  known(paneId: string): boolean {
    return paneId in this.panes;
  }

  /** The tab the pane shows: the backend's active one, else the first. */
  activeTab(paneId: string): T | undefined {
    const tabs = this.tabs(paneId);
    return tabs.find((t) => t.active) ?? tabs[0];
  }

  async refresh(paneId: string): Promise<void> {
    try {
      await this.readTabs(paneId, () => this.fetchTabs(paneId));
    } catch (err) {
      this.fail(paneId, err);
    }
  }

  /**
   * Runs a call that answers the pane's whole tab list and takes the answer, unless a tab event
   * came in meanwhile: then the answer may be older than the event, so the list is read again.
   * Rejects with the call's error, for the caller to show where it belongs.
   */
  protected async openWith(paneId: string, call: () => Promise<T[]>): Promise<T[]> {
    if (!(await this.readTabs(paneId, call))) await this.refresh(paneId);
    return this.tabs(paneId);
  }

  /** A tab list fetched from the backend (a subclass may learn more from it than the tabs). */
  protected received(paneId: string, tabs: T[]): void {
    this.setTabs(paneId, tabs);
  }

  /** A tab event from the backend: counted (see readTabs) and applied. */
  protected tabEvent(paneId: string, kind: string, tab: T): void {
    this.paneEvents.set(paneId, (this.paneEvents.get(paneId) ?? 0) + 1);
    this.applyTab(paneId, kind, tab);
  }

  /** What an event of this kind would do, done at once for a call we made. */
  protected applyTab(paneId: string, kind: string, tab: T): void {
    this.setTabs(paneId, applyPaneTabEvent(this.tabs(paneId), kind, tab, this.replaceOnActivate));
  }

  /** Activates a tab: shown at once, while `call` asks the backend (whose event confirms it). */
  protected async activateWith<R>(paneId: string, tabId: string, call: () => Promise<R>): Promise<R | undefined> {
    const tab = this.tabs(paneId).find((t) => t.tabId === tabId);
    if (tab) this.applyTab(paneId, 'activated', tab);
    return this.attempt(paneId, call);
  }

  /** Closes a tab with `call`, and drops it from the list once the backend has done so. */
  protected async closeWith(paneId: string, tabId: string, call: () => Promise<void>): Promise<void> {
    const ok = await this.attempt(paneId, async () => {
      await call();
      return true;
    });
    const tab = this.tabs(paneId).find((t) => t.tabId === tabId);
    if (ok && tab) this.applyTab(paneId, 'closed', tab);
  }

  protected setTabs(paneId: string, tabs: T[]): void {
    this.panes = { ...this.panes, [paneId]: tabs };
  }

  /** The call's answer, or undefined after showing its failure (see fail). */
  protected async attempt<R>(paneId: string, call: () => Promise<R>): Promise<R | undefined> {
    try {
      return await call();
    } catch (err) {
      this.fail(paneId, err);
      return undefined;
    }
  }

  /** Takes the answer of `call` unless a tab event came in meanwhile; whether it was taken. */
  private async readTabs(paneId: string, call: () => Promise<T[]>): Promise<boolean> {
    const seen = this.paneEvents.get(paneId) ?? 0;
    const tabs = await call();
    if ((this.paneEvents.get(paneId) ?? 0) !== seen) return false;
    this.received(paneId, tabs);
    return true;
  }
}

const EMPTY: PaneTab[] = [];

/**
 * Listeners keyed by pane (or pane and tab), for what streams past reactive state straight to
 * the views that watch: screencast frames, terminal output.
 */
export class ListenerMap<F> {
  private readonly byKey = new Map<string, Set<F>>();

  /** Adds `fn` under `key` until the returned function is called. */
  add(key: string, fn: F): () => void {
    let set = this.byKey.get(key);
    if (!set) {
      set = new Set();
      this.byKey.set(key, set);
    }
    set.add(fn);
    return () => {
      const s = this.byKey.get(key);
      s?.delete(fn);
      if (s?.size === 0) this.byKey.delete(key);
    };
  }

  /** Calls each listener under `key` (a copy of the set, so one may remove itself). */
  each(key: string, call: (fn: F) => void): void {
    const set = this.byKey.get(key);
    if (set) for (const fn of [...set]) call(fn);
  }
}

/**
 * A pane's tabs after one event. The tab in an event is the backend's full view of it; only
 * 'activated' (and an 'opened' tab that is active) moves the active mark. When the active tab
 * closes, the backend shows its neighbour: mirrored at once, the tab now at the closed one's
 * index, else the last. `replaceOnActivate`: an 'activated' event also carries the tab's state.
 */
export function applyPaneTabEvent<T extends PaneTab>(
  tabs: readonly T[],
  kind: string,
  tab: T,
  replaceOnActivate: boolean,
): T[] {
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
    case 'activated': {
      if (i === -1) return withActive([...tabs, { ...tab, active: true }], tab.tabId);
      return withActive(replaceOnActivate ? tabs.map((t, j) => (j === i ? { ...tab } : t)) : tabs, tab.tabId);
    }
    default: {
      // Every other kind carries the tab's new state; keep our active mark unless the event
      // says this tab is active (its snapshot may predate a later activation).
      const held = i === -1 ? undefined : tabs[i];
      const next = { ...tab, active: tab.active || (held?.active ?? false) };
      const list = i === -1 ? [...tabs, next] : tabs.map((t, j) => (j === i ? next : t));
      return next.active ? withActive(list, next.tabId) : list;
    }
  }
}

function withActive<T extends PaneTab>(tabs: readonly T[], tabId: string): T[] {
  return tabs.map((t) => (t.active === (t.tabId === tabId) ? t : { ...t, active: t.tabId === tabId }));
}

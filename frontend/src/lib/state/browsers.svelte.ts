import {
  errorMessage,
  parseBrowserEvent,
  type Backend,
  type BrowserPromptAnswer,
  type BackendEvent,
  type BrowserEvent,
  type BrowserFrame,
  type BrowserInputEvent,
  type BrowserTab,
  type PageInfo,
} from '../api';
import { followBackend } from './follow';

/** Receives a watched pane's screencast frames. */
export type FrameListener = (frame: BrowserFrame) => void;

/** A line shown at the foot of a browser pane: what failed, or what a page did on its own. */
export interface PaneNotice {
  kind: 'error' | 'info';
  message: string;
}

/**
 * Browser tabs per pane as the backend last told us, a notice per pane, and the routing of
 * screencast frames to the views that watch. Frames never touch reactive state: they go straight
 * from the event to the view's canvas.
 *
 * Calls report their failure in the pane they concern (the notice), not the app-wide banner:
 * "could not load https://…" belongs next to the page that could not load it.
 */
export class BrowserStore {
  /** paneId → its tabs, in the backend's order. Replaced wholesale, never mutated. */
  private panes = $state.raw<Record<string, BrowserTab[]>>({});
  /** paneId → the notice shown in that pane. */
  notices = $state.raw<Record<string, PaneNotice>>({});

  private readonly frameListeners = new Map<string, Set<FrameListener>>();
  /** Counts tab events per pane, so a call's older tab list is not applied over a newer event. */
  private readonly paneEvents = new Map<string, number>();
  /** Panes with a viewport request in flight, and the newest size asked for meanwhile. */
  private readonly viewportBusy = new Set<string>();
  private readonly viewportNext = new Map<string, { width: number; height: number }>();

  constructor(private readonly backend: Backend) {}

  /**
   * Follows browser events, and re-reads the tabs of known panes whenever the live connection
   * reopens (events sent while it was down are gone; the transport watches again by itself).
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
    const ev = parseBrowserEvent(e);
    if (ev) this.apply(ev);
  }

  apply(ev: BrowserEvent): void {
    switch (ev.type) {
      case 'frame': {
        const set = this.frameListeners.get(ev.frame.paneId);
        if (set) for (const fn of [...set]) fn(ev.frame);
        return;
      }
      case 'error':
        this.setNotice(ev.paneId, { kind: 'error', message: ev.error });
        return;
      case 'tab': {
        const paneId = ev.tab.paneId;
        this.paneEvents.set(paneId, (this.paneEvents.get(paneId) ?? 0) + 1);
        this.setTabs(paneId, applyBrowserEvent(this.tabs(paneId), ev.kind, ev.tab));
        if (ev.kind === 'download' && ev.detail) {
          this.setNotice(paneId, {
            kind: 'info',
            message: ev.detail.startsWith('cancelled: ') ? `Download ${ev.detail}` : `Downloaded to ${ev.detail}`,
          });
        } else if (ev.kind === 'dialog' && ev.detail) {
          // The backend answers dialogs at once (they block the page); this says what it said.
          this.setNotice(paneId, { kind: 'info', message: ev.detail.charAt(0).toUpperCase() + ev.detail.slice(1) });
        } else if (ev.kind === 'reconnected') {
          this.dismissNotice(paneId);
        }
        return;
      }
    }
  }

  tabs(paneId: string): BrowserTab[] {
    return this.panes[paneId] ?? EMPTY;
  }

  /** Whether the pane's tabs were ever read (open answered, or an event named the pane). */
  known(paneId: string): boolean {
    return paneId in this.panes;
  }

  /** The tab the pane shows: the backend's active one, else the first. */
  activeTab(paneId: string): BrowserTab | undefined {
    const tabs = this.tabs(paneId);
    return tabs.find((t) => t.active) ?? tabs[0];
  }

  notice(paneId: string): PaneNotice | undefined {
    return this.notices[paneId];
  }

  dismissNotice(paneId: string): void {
    if (!(paneId in this.notices)) return;
    const next = { ...this.notices };
    delete next[paneId];
    this.notices = next;
  }

  // ---- calls ---------------------------------------------------------------------------------

  /** Opens a first (blank) tab if the pane has none. Rejects, for the pane to show why. */
  async open(paneId: string, width: number, height: number, url = ''): Promise<BrowserTab[]> {
    const seen = this.paneEvents.get(paneId) ?? 0;
    const tabs = await this.backend.browserOpen(paneId, url, width, height);
    if ((this.paneEvents.get(paneId) ?? 0) === seen) this.setTabs(paneId, tabs);
    else await this.refresh(paneId); // an event came in meanwhile: ask again rather than guess
    return this.tabs(paneId);
  }

  async refresh(paneId: string): Promise<void> {
    const seen = this.paneEvents.get(paneId) ?? 0;
    try {
      const tabs = await this.backend.browserTabs(paneId);
      if ((this.paneEvents.get(paneId) ?? 0) === seen) this.setTabs(paneId, tabs);
    } catch (err) {
      this.fail(paneId, err);
    }
  }

  async newTab(paneId: string, url = ''): Promise<BrowserTab | undefined> {
    const tab = await this.attempt(paneId, () => this.backend.browserNewTab(paneId, url));
    if (tab) this.setTabs(paneId, applyBrowserEvent(this.tabs(paneId), 'opened', { ...tab, active: true }));
    return tab;
  }

  async activate(paneId: string, tabId: string): Promise<void> {
    const tab = this.tabs(paneId).find((t) => t.tabId === tabId);
    // Shown at once; the backend's 'activated' event confirms it.
    if (tab) this.setTabs(paneId, applyBrowserEvent(this.tabs(paneId), 'activated', tab));
    const fresh = await this.attempt(paneId, () => this.backend.browserActivate(paneId, tabId));
    if (fresh) this.setTabs(paneId, applyBrowserEvent(this.tabs(paneId), 'url', fresh));
  }

  async closeTab(paneId: string, tabId: string): Promise<void> {
    const ok = await this.attempt(paneId, async () => {
      await this.backend.browserCloseTab(paneId, tabId);
      return true;
    });
    const tab = this.tabs(paneId).find((t) => t.tabId === tabId);
    if (ok && tab) this.setTabs(paneId, applyBrowserEvent(this.tabs(paneId), 'closed', tab));
  }

  navigate(paneId: string, url: string): Promise<PageInfo | undefined> {
    const target = url.trim();
    if (!target) return Promise.resolve(undefined);
    return this.pageAction(paneId, () => this.backend.browserNavigate(paneId, target), target);
  }

  back(paneId: string): Promise<PageInfo | undefined> {
    return this.pageAction(paneId, () => this.backend.browserBack(paneId));
  }

  forward(paneId: string): Promise<PageInfo | undefined> {
    return this.pageAction(paneId, () => this.backend.browserForward(paneId));
  }

  reload(paneId: string): Promise<PageInfo | undefined> {
    return this.pageAction(paneId, () => this.backend.browserReload(paneId));
  }

  /** Answers the active tab's question (the tab's next event clears it); rejects with the backend's error. */
  answerPrompt(paneId: string, answer: BrowserPromptAnswer): Promise<void> {
    return this.backend.browserAnswerPrompt(paneId, answer);
  }

  async reconnect(paneId: string): Promise<void> {
    const tab = await this.attempt(paneId, () => this.backend.browserReconnect(paneId));
    if (tab) {
      this.dismissNotice(paneId);
      this.setTabs(paneId, applyBrowserEvent(this.tabs(paneId), 'reconnected', tab));
    }
  }

  /**
   * Best effort: the view sends its size again after the next change. One request per pane is
   * in flight at a time; sizes asked for meanwhile wait, and only the newest is sent after it,
   * so a drag of the grid dividers makes no pile of requests the page cannot keep up with.
   */
  viewport(paneId: string, width: number, height: number): void {
    if (this.viewportBusy.has(paneId)) {
      this.viewportNext.set(paneId, { width, height });
      return;
    }
    this.viewportBusy.add(paneId);
    this.backend
      .browserViewport(paneId, width, height)
      .catch((err) => this.fail(paneId, err))
      .finally(() => {
        this.viewportBusy.delete(paneId);
        const next = this.viewportNext.get(paneId);
        if (!next) return;
        this.viewportNext.delete(paneId);
        this.viewport(paneId, next.width, next.height);
      });
  }

  watch(paneId: string): void {
    this.backend.browserWatch(paneId);
  }

  unwatch(paneId: string): void {
    this.backend.browserUnwatch(paneId);
  }

  input(paneId: string, event: BrowserInputEvent): void {
    this.backend.browserInput(paneId, event);
  }

  /**
   * Shows `url` in the pane: navigates its active tab, or opens the pane's first tab at it when
   * it has none yet.
   */
  async show(paneId: string, url: string): Promise<void> {
    if (this.tabs(paneId).length > 0) {
      await this.navigate(paneId, url);
      return;
    }
    try {
      const tabs = await this.open(paneId, 0, 0, url);
      // The pane had a tab after all (opened elsewhere): it was not navigated, so do it now.
      if (!tabs.some((t) => sameUrl(t.url, url))) await this.navigate(paneId, url);
    } catch (err) {
      this.fail(paneId, err);
    }
  }

  /** Routes the pane's frames to `fn` until the returned function is called. */
  onFrame(paneId: string, fn: FrameListener): () => void {
    let set = this.frameListeners.get(paneId);
    if (!set) {
      set = new Set();
      this.frameListeners.set(paneId, set);
    }
    set.add(fn);
    return () => {
      const s = this.frameListeners.get(paneId);
      s?.delete(fn);
      if (s?.size === 0) this.frameListeners.delete(paneId);
    };
  }

  // ---- internals ---------------------------------------------------------------------------

  /** A navigation: shows the page it reached on the active tab, or the error in the pane. */
  private async pageAction(paneId: string, act: () => Promise<PageInfo>, typed?: string): Promise<PageInfo | undefined> {
    this.dismissNotice(paneId);
    const active = this.activeTab(paneId);
    if (active && typed !== undefined) {
      // The URL bar shows where we are going while the page loads.
      this.patchTab(paneId, active.tabId, { loading: true });
    }
    const page = await this.attempt(paneId, act);
    if (page) {
      const tabId = page.tabId || active?.tabId;
      if (tabId) {
        const patch: Partial<BrowserTab> = { loading: page.loading };
        if (page.url) patch.url = page.url;
        if (page.title) patch.title = page.title;
        this.patchTab(paneId, tabId, patch);
      }
      if (page.download) this.setNotice(paneId, { kind: 'info', message: 'The page was downloaded, not shown' });
    } else if (active) {
      this.patchTab(paneId, active.tabId, { loading: false });
    }
    return page;
  }

  private patchTab(paneId: string, tabId: string, patch: Partial<BrowserTab>): void {
    const tabs = this.tabs(paneId);
    if (!tabs.some((t) => t.tabId === tabId)) return;
    this.setTabs(
      paneId,
      tabs.map((t) => (t.tabId === tabId ? { ...t, ...patch } : t)),
    );
  }

  private setTabs(paneId: string, tabs: BrowserTab[]): void {
    this.panes = { ...this.panes, [paneId]: tabs };
  }

  private setNotice(paneId: string, notice: PaneNotice): void {
    const held = this.notices[paneId];
    if (held && held.kind === notice.kind && held.message === notice.message) return;
    this.notices = { ...this.notices, [paneId]: notice };
  }

  private fail(paneId: string, err: unknown): void {
    this.setNotice(paneId, { kind: 'error', message: errorMessage(err) });
  }

  private async attempt<T>(paneId: string, call: () => Promise<T>): Promise<T | undefined> {
    try {
      return await call();
    } catch (err) {
      this.fail(paneId, err);
      return undefined;
    }
  }
}

const EMPTY: BrowserTab[] = [];

function sameUrl(a: string, b: string): boolean {
  const norm = (u: string) => u.trim().replace(/\/+$/, '');
  return norm(a) === norm(b);
}

/**
 * A pane's tabs after one event. The tab in an event is the backend's full view of it; only
 * 'activated' (and an 'opened' tab that is active) moves the active mark. When the active tab
 * closes, the backend shows its neighbour (its 'activated' event follows): mirrored at once.
 */
export function applyBrowserEvent(tabs: readonly BrowserTab[], kind: string, tab: BrowserTab): BrowserTab[] {
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
      return withActive(i === -1 ? [...tabs, { ...tab, active: true }] : tabs.map((t, j) => (j === i ? { ...tab } : t)), tab.tabId);
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

function withActive(tabs: readonly BrowserTab[], tabId: string): BrowserTab[] {
  return tabs.map((t) => (t.active === (t.tabId === tabId) ? t : { ...t, active: t.tabId === tabId }));
}

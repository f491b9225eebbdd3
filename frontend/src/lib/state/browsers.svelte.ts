import {
  errorMessage,
  parseBrowserEvent,
  type Backend,
  type BrowserPromptAnswer,
  type BrowserEvent,
  type BrowserFrame,
  type BrowserInputEvent,
  type BrowserTab,
  type PageInfo,
} from '../api';
import { applyPaneTabEvent, ListenerMap, PaneTabStore } from './paneTabs.svelte';

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
export class BrowserStore extends PaneTabStore<BrowserTab, BrowserEvent> {
  /** paneId → the notice shown in that pane. */
  notices = $state.raw<Record<string, PaneNotice>>({});

  private readonly frameListeners = new ListenerMap<FrameListener>();
  /** Panes with a viewport request in flight, and the newest size asked for meanwhile. */
  private readonly viewportBusy = new Set<string>();
  private readonly viewportNext = new Map<string, { width: number; height: number }>();

  constructor(backend: Backend) {
    super(backend, true, parseBrowserEvent);
  }

  apply(ev: BrowserEvent): void {
    switch (ev.type) {
      case 'frame':
        this.frameListeners.each(ev.frame.paneId, (fn) => fn(ev.frame));
        return;
      case 'error':
        this.setNotice(ev.paneId, { kind: 'error', message: ev.error });
        return;
      case 'tab': {
        const paneId = ev.tab.paneId;
        this.tabEvent(paneId, ev.kind, ev.tab);
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
  open(paneId: string, width: number, height: number, url = ''): Promise<BrowserTab[]> {
    return this.openWith(paneId, () => this.backend.browserOpen(paneId, url, width, height));
  }

  async newTab(paneId: string, url = ''): Promise<BrowserTab | undefined> {
    const tab = await this.attempt(paneId, () => this.backend.browserNewTab(paneId, url));
    if (tab) this.applyTab(paneId, 'opened', { ...tab, active: true });
    return tab;
  }

  async activate(paneId: string, tabId: string): Promise<void> {
    const fresh = await this.activateWith(paneId, tabId, () => this.backend.browserActivate(paneId, tabId));
    if (fresh) this.applyTab(paneId, 'url', fresh);
  }

  closeTab(paneId: string, tabId: string): Promise<void> {
    return this.closeWith(paneId, tabId, () => this.backend.browserCloseTab(paneId, tabId));
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
      this.applyTab(paneId, 'reconnected', tab);
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
    return this.frameListeners.add(paneId, fn);
  }

  // ---- internals ---------------------------------------------------------------------------

  protected fetchTabs(paneId: string): Promise<BrowserTab[]> {
    return this.backend.browserTabs(paneId);
  }

  /** A failed call shows in the pane it concerns. */
  protected fail(paneId: string, err: unknown): void {
    this.setNotice(paneId, { kind: 'error', message: errorMessage(err) });
  }

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

  private setNotice(paneId: string, notice: PaneNotice): void {
    const held = this.notices[paneId];
    if (held && held.kind === notice.kind && held.message === notice.message) return;
    this.notices = { ...this.notices, [paneId]: notice };
  }

}

function sameUrl(a: string, b: string): boolean {
  const norm = (u: string) => u.trim().replace(/\/+$/, '');
  return norm(a) === norm(b);
}

/** A pane's browser tabs after one event; an 'activated' event also brings the tab's new state. */
export function applyBrowserEvent(tabs: readonly BrowserTab[], kind: string, tab: BrowserTab): BrowserTab[] {
  return applyPaneTabEvent(tabs, kind, tab, true);
}

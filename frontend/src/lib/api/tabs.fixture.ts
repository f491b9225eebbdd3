import type { BrowserTab, TabInfo } from './types';
import { normalizeBrowserTab, normalizeTab } from './types';

// Tabs for tests, in pane p1: what a test does not set is what the backend sends for a fresh
// tab (the normalisers fill what Go leaves out, as they do on the wire).

/** A running 80x24 bash tab, not the active one unless `over` says so. */
export function terminalTab(tabId: string, over: Partial<TabInfo> = {}): TabInfo {
  return { ...normalizeTab({ paneId: 'p1', tabId, title: 'bash', running: true, cols: 80, rows: 24, pid: 1 }), ...over };
}

/** A blank browser tab in workspace w1, not the active one unless `over` says so. */
export function browserTab(tabId: string, over: Partial<BrowserTab> = {}): BrowserTab {
  return { ...normalizeBrowserTab({ paneId: 'p1', tabId, workspaceId: 'w1', url: 'about:blank' }), ...over };
}

// Browser-pane wire helpers shared by both transports and the browser store: browser events are
// checked and typed once here.
import type { BackendEvent, BrowserEventKind, BrowserFrame, BrowserTab } from './types';
import { BROWSER_TOPIC, normalizeBrowserTab } from './types';

const BROWSER_EVENT_KINDS: readonly BrowserEventKind[] = [
  'opened',
  'closed',
  'activated',
  'url',
  'title',
  'loading',
  'crashed',
  'reconnected',
  'discarded',
  'download',
  'dialog',
  'prompt',
];

/** A browser event, checked. Frames keep their JPEG as base64: the view decodes it. */
export type BrowserEvent =
  | { type: 'tab'; kind: BrowserEventKind; tab: BrowserTab; detail: string }
  | { type: 'frame'; frame: BrowserFrame }
  | { type: 'error'; paneId: string; error: string };

/**
 * The browser event `e` carries, or null when it is another topic, a kind this UI does not use,
 * or malformed (malformed ones are logged: the backend and this UI disagree about the wire).
 */
export function parseBrowserEvent(e: BackendEvent): BrowserEvent | null {
  if (e.topic !== BROWSER_TOPIC) return null;
  const d = (e.data ?? {}) as Record<string, unknown>;
  switch (e.type) {
    case 'frame':
      if (typeof d.paneId === 'string' && typeof d.data === 'string' && d.data) {
        return {
          type: 'frame',
          frame: {
            paneId: d.paneId,
            tabId: typeof d.tabId === 'string' ? d.tabId : '',
            data: d.data,
            width: num(d.width),
            height: num(d.height),
            scrollX: num(d.scrollX),
            scrollY: num(d.scrollY),
          },
        };
      }
      break;
    case 'error':
      if (typeof d.paneId === 'string') {
        const error = typeof d.error === 'string' && d.error ? d.error : 'The browser pane failed without saying why';
        return { type: 'error', paneId: d.paneId, error };
      }
      break;
    default: {
      // Tab events: the envelope's type is the kind, and the data says it again.
      const kind = typeof d.kind === 'string' ? d.kind : e.type;
      if (!(BROWSER_EVENT_KINDS as string[]).includes(kind)) return null; // a kind this UI does not use
      if (d.tab) {
        const tab = normalizeBrowserTab(d.tab);
        if (tab.paneId && tab.tabId) {
          return { type: 'tab', kind: kind as BrowserEventKind, tab, detail: typeof d.detail === 'string' ? d.detail : '' };
        }
      }
    }
  }
  console.warn('clusterspace: ignoring a malformed browser event', e);
  return null;
}

function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

// Terminal wire helpers shared by both transports and the terminal store: terminal output
// travels as base64 (JSON has no bytes), and terminal events are checked and typed once here.
import type { BackendEvent, TabEventKind, TabInfo } from './types';
import { normalizeTab, TERMINAL_TOPIC } from './types';

/** The raw bytes of a base64 string. Rejects text that is not base64, as atob does. */
export function base64ToBytes(b64: string): Uint8Array {
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** base64 of bytes; the inverse of base64ToBytes (tests and fakes use it). */
export function bytesToBase64(bytes: Uint8Array): string {
  let bin = '';
  // Chunks keep String.fromCharCode's argument list small for big outputs.
  for (let i = 0; i < bytes.length; i += 0x8000) {
    bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(bin);
}

const TAB_EVENT_KINDS: readonly TabEventKind[] = ['opened', 'closed', 'exited', 'restarted', 'title', 'activated'];

/** A terminal event, checked and decoded. */
export type TerminalEvent =
  | { type: 'tab'; kind: TabEventKind; tab: TabInfo }
  | { type: 'output'; paneId: string; tabId: string; data: Uint8Array; resync: boolean }
  | { type: 'broadcast'; paneId: string; include: boolean };

/**
 * The terminal event `e` carries, or null when it is another topic, a type this UI does not use,
 * or malformed (malformed ones are logged: the backend and this UI disagree about the wire).
 */
export function parseTerminalEvent(e: BackendEvent): TerminalEvent | null {
  if (e.topic !== TERMINAL_TOPIC) return null;
  const d = (e.data ?? {}) as Record<string, unknown>;
  try {
    switch (e.type) {
      case 'tab':
        if (typeof d.kind === 'string' && (TAB_EVENT_KINDS as string[]).includes(d.kind) && d.tab) {
          const tab = normalizeTab(d.tab);
          if (tab.paneId && tab.tabId) return { type: 'tab', kind: d.kind as TabEventKind, tab };
        }
        break;
      case 'output':
        if (typeof d.paneId === 'string' && typeof d.tabId === 'string' && typeof d.data === 'string') {
          return {
            type: 'output',
            paneId: d.paneId,
            tabId: d.tabId,
            data: base64ToBytes(d.data),
            resync: d.resync === true,
          };
        }
        break;
      case 'broadcast':
        if (typeof d.paneId === 'string' && typeof d.include === 'boolean') {
          return { type: 'broadcast', paneId: d.paneId, include: d.include };
        }
        break;
      default:
        return null; // a type this UI does not use
    }
  } catch {
    // Bad base64: reported below like any other malformed event.
  }
  console.warn('clusterspace: ignoring a malformed terminal event', e);
  return null;
}

/** One key for a pane's tab, for maps. */
export function tabKey(paneId: string, tabId: string): string {
  return `${paneId}\u0000${tabId}`;
}

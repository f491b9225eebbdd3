// The only door to the backend. Components and state import from here and never learn which
// transport they run on: Wails bindings in the desktop app, fetch + WebSocket under
// `clusterspace serve`.
import type { Backend } from './backend';
import { HttpBackend } from './http';
import { WailsBackend, wailsApp } from './wails';

export * from './types';
export { BackendError, busyPanes, errorMessage, isAuthRequired } from './errors';
export type { BusyPane } from './errors';
export { base64ToBytes, bytesToBase64, parseTerminalEvent, tabKey, type TerminalEvent } from './terminal';
export { parseBrowserEvent, type BrowserEvent } from './browser';
export * from './goals';
export * from './chat';
export * from './recipes';
export * from './logins';
export * from './agents';
export * from './fleets';
export * from './catalog';
export * from './extensions';
export * from './review';
export * from './inbox';
export * from './agentKeys';

export type { Auth, Backend } from './backend';

/** Desktop when Wails has injected its bindings (it does so before our module script runs). */
export function pickBackend(): Backend {
  const app = wailsApp();
  if (app) return new WailsBackend(app, window.runtime);
  return new HttpBackend();
}

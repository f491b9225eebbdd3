// Desktop transport: the Go App methods Wails binds on window.go.main.App, and backend events
// forwarded with runtime.EventsEmit('backend', …).
import type { Backend } from './index';
import type {
  BackendEvent,
  Discovered,
  PanePatch,
  PriceTable,
  Provider,
  ProviderInput,
  ProviderList,
  TabInfo,
  TestResult,
  Workspace,
  WorkspaceList,
} from './types';
import { normalizeTab, normalizeTabs, PROVIDER_ERROR_FIELDS, wireProviderInput } from './types';
import { base64ToBytes, tabKey } from './terminal';
import { BackendError, errorMessage, fieldFromMessage } from './errors';

/** The bound Go methods, as Wails exposes them (each returns a Promise; rejections are strings). */
export interface WailsApp {
  Version(): Promise<string>;
  ListWorkspaces(): Promise<WorkspaceList>;
  CreateWorkspace(name: string): Promise<Workspace>;
  RenameWorkspace(id: string, name: string): Promise<Workspace>;
  DeleteWorkspace(id: string): Promise<void>;
  ActivateWorkspace(id: string): Promise<void>;
  SetGrid(id: string, rows: number, cols: number): Promise<Workspace>;
  SetWeights(id: string, rowWeights: number[], colWeights: number[]): Promise<Workspace>;
  SwapPanes(id: string, paneA: string, paneB: string): Promise<Workspace>;
  /** Empty kind or label means "unchanged". */
  UpdatePane(id: string, paneId: string, kind: string, label: string): Promise<Workspace>;
  /** Resolves to the saved path, or '' when the user cancelled the dialog. */
  ExportWorkspace(id: string): Promise<string>;
  ImportWorkspace(json: string): Promise<Workspace>;
  ListProviders(): Promise<ProviderList>;
  /** id '' creates; an absent apiKey keeps the stored key (Go sees nil). */
  SaveProvider(id: string, input: ProviderInput): Promise<Provider>;
  DeleteProvider(id: string): Promise<void>;
  SetDefaultProviders(defaultId: string, criticId: string): Promise<ProviderList>;
  TestProvider(id: string): Promise<TestResult>;
  /** Go's nil slice arrives as null. */
  DiscoverProviders(host: string): Promise<Discovered[] | null>;
  Prices(): Promise<PriceTable | null>;
  SetPrices(prices: PriceTable): Promise<void>;
  /** Go's nil slice arrives as null, and a tab without its omitempty fields (see normalizeTab). */
  TerminalOpen(paneId: string, cols: number, rows: number): Promise<Partial<TabInfo>[] | null>;
  TerminalNewTab(paneId: string, cols: number, rows: number): Promise<Partial<TabInfo>>;
  TerminalTabs(paneId: string): Promise<Partial<TabInfo>[] | null>;
  /** Go's []byte arrives as base64. */
  TerminalAttach(paneId: string, tabId: string): Promise<string>;
  TerminalDetach(paneId: string, tabId: string): Promise<void>;
  TerminalInput(paneId: string, tabId: string, data: string): Promise<void>;
  TerminalResize(paneId: string, tabId: string, cols: number, rows: number): Promise<void>;
  TerminalRestart(paneId: string, tabId: string): Promise<void>;
  TerminalCloseTab(paneId: string, tabId: string): Promise<void>;
  TerminalActivate(paneId: string, tabId: string): Promise<void>;
  TerminalSetBroadcast(paneId: string, include: boolean): Promise<void>;
}

export interface WailsRuntime {
  EventsOn(name: string, callback: (...data: any[]) => void): () => void;
  // Used by the terminal view when present: WebKitGTK's own clipboard API and window.open are
  // unreliable in the desktop window.
  ClipboardGetText?(): Promise<string>;
  ClipboardSetText?(text: string): Promise<boolean>;
  BrowserOpenURL?(url: string): void;
}

declare global {
  interface Window {
    go?: { main?: { App?: WailsApp } };
    runtime?: WailsRuntime;
  }
}

/** The event name app.go emits every backend event under. */
export const WAILS_EVENT = 'backend';

export function wailsApp(): WailsApp | undefined {
  return typeof window === 'undefined' ? undefined : window.go?.main?.App;
}

export class WailsBackend implements Backend {
  readonly kind = 'desktop' as const;

  /**
   * Wails runs every bound call on its own goroutine, so two calls may reach Go in either order.
   * Calls about one tab (attach, detach, input, resize) therefore go one at a time, in order.
   */
  private readonly lanes = new Map<string, Lane>();
  /** Typed text not yet sent, per tab: keystrokes made while a call is in flight go as one. */
  private readonly pendingInput = new Map<string, string>();
  /** The newest size not yet sent, per tab: only the last of a burst of resizes matters. */
  private readonly pendingSize = new Map<string, { cols: number; rows: number }>();

  constructor(
    private readonly app: WailsApp,
    private readonly runtime: WailsRuntime | undefined,
  ) {}

  version() {
    return call(() => this.app.Version());
  }
  listWorkspaces() {
    return call(() => this.app.ListWorkspaces());
  }
  createWorkspace(name: string) {
    return call(() => this.app.CreateWorkspace(name));
  }
  renameWorkspace(id: string, name: string) {
    return call(() => this.app.RenameWorkspace(id, name));
  }
  deleteWorkspace(id: string) {
    return call(() => this.app.DeleteWorkspace(id));
  }
  activateWorkspace(id: string) {
    return call(() => this.app.ActivateWorkspace(id));
  }
  setGrid(id: string, rows: number, cols: number) {
    return call(() => this.app.SetGrid(id, rows, cols));
  }
  setWeights(id: string, rowWeights: number[], colWeights: number[]) {
    return call(() => this.app.SetWeights(id, rowWeights, colWeights));
  }
  swapPanes(id: string, paneA: string, paneB: string) {
    return call(() => this.app.SwapPanes(id, paneA, paneB));
  }
  updatePane(id: string, paneId: string, patch: PanePatch) {
    return call(() => this.app.UpdatePane(id, paneId, patch.kind ?? '', patch.label ?? ''));
  }
  async exportWorkspace(id: string) {
    // The native dialog does the saving; a cancelled dialog ('' path) is the user's choice.
    await call(() => this.app.ExportWorkspace(id));
  }
  importWorkspace(json: string) {
    return call(() => this.app.ImportWorkspace(json));
  }

  listProviders() {
    return call(() => this.app.ListProviders());
  }
  saveProvider(id: string, input: ProviderInput) {
    return call(() => this.app.SaveProvider(id, wireProviderInput(input)), PROVIDER_ERROR_FIELDS);
  }
  deleteProvider(id: string) {
    return call(() => this.app.DeleteProvider(id));
  }
  setDefaultProviders(defaultId: string, criticDefaultId: string) {
    return call(() => this.app.SetDefaultProviders(defaultId, criticDefaultId), PROVIDER_ERROR_FIELDS);
  }
  testProvider(id: string) {
    return call(() => this.app.TestProvider(id));
  }
  async discoverProviders(host: string) {
    return (await call(() => this.app.DiscoverProviders(host), PROVIDER_ERROR_FIELDS)) ?? [];
  }
  async prices() {
    return (await call(() => this.app.Prices())) ?? {};
  }
  setPrices(prices: PriceTable) {
    return call(() => this.app.SetPrices(prices), PROVIDER_ERROR_FIELDS);
  }

  async terminalOpen(paneId: string, cols: number, rows: number) {
    return normalizeTabs(await call(() => this.app.TerminalOpen(paneId, cols, rows)));
  }
  async terminalNewTab(paneId: string, cols: number, rows: number) {
    return normalizeTab(await call(() => this.app.TerminalNewTab(paneId, cols, rows)));
  }
  async terminalTabs(paneId: string) {
    return normalizeTabs(await call(() => this.app.TerminalTabs(paneId)));
  }
  terminalAttach(paneId: string, tabId: string) {
    return this.inLane(paneId, tabId, async () => {
      const b64 = await call(() => this.app.TerminalAttach(paneId, tabId));
      return base64ToBytes(b64 ?? '');
    });
  }
  terminalDetach(paneId: string, tabId: string) {
    return this.inLane(paneId, tabId, () => call(() => this.app.TerminalDetach(paneId, tabId)));
  }
  terminalInput(paneId: string, tabId: string, data: string): void {
    const key = tabKey(paneId, tabId);
    const queued = this.pendingInput.get(key);
    if (queued !== undefined) {
      this.pendingInput.set(key, queued + data); // rides along with the call already queued
      return;
    }
    this.pendingInput.set(key, data);
    this.inLane(paneId, tabId, () => {
      const text = this.pendingInput.get(key) ?? '';
      this.pendingInput.delete(key);
      return call(() => this.app.TerminalInput(paneId, tabId, text));
    }).catch((err) => {
      // Fire-and-forget by contract; the tab's exit or removal reaches the UI as an event.
      console.warn('clusterspace: terminal input was not delivered:', errorMessage(err));
    });
  }
  terminalResize(paneId: string, tabId: string, cols: number, rows: number): void {
    const key = tabKey(paneId, tabId);
    const queued = this.pendingSize.has(key);
    this.pendingSize.set(key, { cols, rows });
    if (queued) return;
    this.inLane(paneId, tabId, () => {
      const size = this.pendingSize.get(key) ?? { cols, rows };
      this.pendingSize.delete(key);
      return call(() => this.app.TerminalResize(paneId, tabId, size.cols, size.rows));
    }).catch((err) => {
      console.warn('clusterspace: terminal resize was not delivered:', errorMessage(err));
    });
  }
  terminalRestart(paneId: string, tabId: string) {
    return call(() => this.app.TerminalRestart(paneId, tabId));
  }
  terminalCloseTab(paneId: string, tabId: string) {
    return call(() => this.app.TerminalCloseTab(paneId, tabId));
  }
  terminalActivate(paneId: string, tabId: string) {
    return call(() => this.app.TerminalActivate(paneId, tabId));
  }
  terminalSetBroadcast(paneId: string, include: boolean) {
    return call(() => this.app.TerminalSetBroadcast(paneId, include));
  }

  /** Runs fn after every earlier call of the tab's lane has settled. */
  private inLane<T>(paneId: string, tabId: string, fn: () => Promise<T>): Promise<T> {
    const key = tabKey(paneId, tabId);
    let lane = this.lanes.get(key);
    if (!lane) {
      lane = { tail: Promise.resolve(), depth: 0 };
      this.lanes.set(key, lane);
    }
    const l = lane;
    l.depth++;
    const result = l.tail.then(fn);
    l.tail = result.then(
      () => undefined,
      () => undefined,
    );
    void l.tail.then(() => {
      if (--l.depth === 0 && this.lanes.get(key) === l) this.lanes.delete(key);
    });
    return result;
  }

  subscribe(handler: (e: BackendEvent) => void): () => void {
    if (!this.runtime) {
      throw new BackendError('Wails runtime is missing: backend events cannot be received');
    }
    return this.runtime.EventsOn(WAILS_EVENT, (e: BackendEvent) => handler(e));
  }
}

interface Lane {
  tail: Promise<void>;
  depth: number;
}

/**
 * Wails rejects with the Go error's text as a plain string; give callers a real Error, with the
 * field the text names when it is one of `fields`.
 */
async function call<T>(fn: () => Promise<T>, fields: readonly string[] = []): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof BackendError) throw err;
    const message = errorMessage(err);
    throw new BackendError(message, { field: fieldFromMessage(message, fields) });
  }
}

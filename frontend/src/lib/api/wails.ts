// Desktop transport: the Go App methods Wails binds on window.go.main.App, and backend events
// forwarded with runtime.EventsEmit('backend', …).
import type { Backend } from './backend';
import type { BackendEvent, BrowserInputEvent } from './types';
import { BROWSER_TOPIC } from './types';
import { base64ToBytes, tabKey } from './terminal';
import type { CatalogPath } from './catalog';
import { TableBackend, type Call } from './table';
import { BackendError, callWails as call, tableError, errorMessage } from './errors';

/** The bound Go methods, as Wails exposes them (each returns a Promise; rejections are strings). */
export interface WailsApp {
  /** Optional: a binary older than the startup marks lacks it. */
  ReportStartup?(marks: Record<string, number>): Promise<void>;
  ReportProblem?(message: string): Promise<void>;
  EchoProbeKeys?(): Promise<number>;
  SoftwareGraphics?(): Promise<boolean>;
  ReportEcho?(samplesMs: number[]): Promise<void>;
  /** Resolves to the saved path, or '' when the user cancelled the dialog. */
  ExportWorkspace(id: string): Promise<string>;
  /** Go's []byte arrives as base64. */
  TerminalAttach(paneId: string, tabId: string): Promise<string>;
  TerminalDetach(paneId: string, tabId: string): Promise<void>;
  TerminalInput(paneId: string, tabId: string, data: string): Promise<void>;
  TerminalResize(paneId: string, tabId: string, cols: number, rows: number): Promise<void>;
  /** Resolves once the screencast started; frames follow as 'browser'/'frame' events. */
  BrowserWatch(paneId: string): Promise<void>;
  BrowserUnwatch(paneId: string): Promise<void>;
  BrowserInput(paneId: string, event: BrowserInputEvent): Promise<void>;
  WindowFocused(focused: boolean): Promise<void>;
  /** Desktop-only calls of the fleets, the catalog and the extensions (app_fleets.go, app_catalog.go, app_extensions.go). */
  SaveFleetFile(name: string, text: string): Promise<void>;
  /** Rejects as Call does, with the JSON of the table's error body. */
  OpenCatalogPath(kind: string, id: string): Promise<CatalogPath>;
  OpenExtensionsFolder(which: string): Promise<void>;
  /** Runs a call of the table (backend/api); a refusal rejects with the JSON of its error body. */
  Call(name: string, args: unknown): Promise<unknown>;
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

export class WailsBackend extends TableBackend implements Backend {
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
  /** Browser input not yet sent, per pane: events made while a call is in flight wait here. */
  private readonly pendingBrowserInput = new Map<string, BrowserInputEvent[]>();
  /**
   * Our own subscribers, besides Wails' event bus: failures of fire-and-forget browser calls
   * are handed to them as 'browser'/'error' events, as the web transport receives them.
   */
  private readonly localHandlers = new Set<(e: BackendEvent) => void>();

  constructor(
    private readonly app: WailsApp,
    private readonly runtime: WailsRuntime | undefined,
  ) {
    super({
      // Opening a file is the desktop's own; a refusal is the table's error body.
      openCatalogPath: async (kind, id) => {
        try {
          return await app.OpenCatalogPath(kind, id);
        } catch (err) {
          throw tableError(err);
        }
      },
      // The desktop's person sits at the machine that holds the vault: no password again.
      revealNeedsPassword: false,
      saveFleetFile: (name, yaml) => call(() => app.SaveFleetFile(name, yaml)),
      openExtensionsFolder: (which) => call(() => app.OpenExtensionsFolder(which)),
    });
  }

  /** A call of the table: the one binding App.Call(name, args). */
  protected call: Call = async (name, args) => {
    try {
      return (await this.app.Call(name, args)) as never;
    } catch (err) {
      throw tableError(err);
    }
  };
  reportStartup(marks: Record<string, number>) {
    // Best effort: only tests and benchmarks read it.
    this.app.ReportStartup?.(marks).catch(() => {});
  }
  reportProblem(message: string) {
    // Best effort: a failed report must not raise another error.
    this.app.ReportProblem?.(message).catch(() => {});
  }
  echoProbeKeys() {
    return this.app.EchoProbeKeys?.() ?? Promise.resolve(0);
  }
  softwareGraphics() {
    return this.app.SoftwareGraphics?.() ?? Promise.resolve(false);
  }
  reportEcho(samplesMs: number[]) {
    this.app.ReportEcho?.(samplesMs).catch(() => {});
  }
  async exportWorkspace(id: string) {
    // The native dialog does the saving; a cancelled dialog ('' path) is the user's choice.
    await call(() => this.app.ExportWorkspace(id));
  }


  terminalAttach(paneId: string, tabId: string) {
    return this.inLane(tabKey(paneId, tabId), async () => {
      const b64 = await call(() => this.app.TerminalAttach(paneId, tabId));
      return base64ToBytes(b64 ?? '');
    });
  }
  terminalDetach(paneId: string, tabId: string) {
    return this.inLane(tabKey(paneId, tabId), () => call(() => this.app.TerminalDetach(paneId, tabId)));
  }
  terminalInput(paneId: string, tabId: string, data: string): void {
    const key = tabKey(paneId, tabId);
    const queued = this.pendingInput.get(key);
    if (queued !== undefined) {
      this.pendingInput.set(key, queued + data); // rides along with the call already queued
      return;
    }
    this.pendingInput.set(key, data);
    this.inLane(key, () => {
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
    this.inLane(key, () => {
      const size = this.pendingSize.get(key) ?? { cols, rows };
      this.pendingSize.delete(key);
      return call(() => this.app.TerminalResize(paneId, tabId, size.cols, size.rows));
    }).catch((err) => {
      console.warn('clusterspace: terminal resize was not delivered:', errorMessage(err));
    });
  }

  /** Watch and unwatch of a pane go one at a time, in order, so the last one wins. */
  browserWatch(paneId: string): void {
    this.inLane(browserLane(paneId, 'watch'), () => call(() => this.app.BrowserWatch(paneId))).catch((err) =>
      this.browserError(paneId, err),
    );
  }
  browserUnwatch(paneId: string): void {
    this.inLane(browserLane(paneId, 'watch'), () => call(() => this.app.BrowserUnwatch(paneId))).catch((err) => {
      console.warn('clusterspace: browser unwatch was not delivered:', errorMessage(err));
    });
  }

  windowFocused(focused: boolean) {
    return call(() => this.app.WindowFocused(focused));
  }
  /**
   * One call at a time per pane, in order. Events made while a call is in flight wait and go
   * next; of consecutive waiting mouse moves only the newest is sent.
   */
  browserInput(paneId: string, event: BrowserInputEvent): void {
    const key = browserLane(paneId, 'input');
    const queued = this.pendingBrowserInput.get(key);
    if (queued) {
      const last = queued[queued.length - 1];
      if (last && last.type === 'mousemove' && event.type === 'mousemove') queued[queued.length - 1] = event;
      else queued.push(event);
      return;
    }
    this.pendingBrowserInput.set(key, [event]);
    const drain = async (): Promise<void> => {
      for (;;) {
        const next = this.pendingBrowserInput.get(key)?.shift();
        if (!next) {
          this.pendingBrowserInput.delete(key);
          return;
        }
        try {
          await call(() => this.app.BrowserInput(paneId, next));
        } catch (err) {
          this.browserError(paneId, err);
        }
      }
    };
    void drain();
  }

  /** A failed fire-and-forget browser call, told to subscribers as the web transport hears it. */
  private browserError(paneId: string, err: unknown): void {
    const event: BackendEvent = { topic: BROWSER_TOPIC, type: 'error', data: { paneId, error: errorMessage(err) } };
    for (const h of [...this.localHandlers]) h(event);
  }

  /** Runs fn after every earlier call of the lane (one tab's, or one pane's) has settled. */
  private inLane<T>(key: string, fn: () => Promise<T>): Promise<T> {
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
    const off = this.runtime.EventsOn(WAILS_EVENT, (e: BackendEvent) => handler(e));
    this.localHandlers.add(handler);
    return () => {
      this.localHandlers.delete(handler);
      off();
    };
  }
}

function browserLane(paneId: string, lane: 'watch' | 'input'): string {
  return `browser-${lane}\u0000${paneId}`;
}

interface Lane {
  tail: Promise<void>;
  depth: number;
}

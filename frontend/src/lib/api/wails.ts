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
  TestResult,
  Workspace,
  WorkspaceList,
} from './types';
import { PROVIDER_ERROR_FIELDS, wireProviderInput } from './types';
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
}

export interface WailsRuntime {
  EventsOn(name: string, callback: (...data: any[]) => void): () => void;
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

  subscribe(handler: (e: BackendEvent) => void): () => void {
    if (!this.runtime) {
      throw new BackendError('Wails runtime is missing: backend events cannot be received');
    }
    return this.runtime.EventsOn(WAILS_EVENT, (e: BackendEvent) => handler(e));
  }
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

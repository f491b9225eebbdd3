// Web transport for `clusterspace serve`: JSON over fetch with JWT bearer tokens, and backend
// events over one WebSocket that reconnects on its own.
import type { Auth, Backend } from './backend';
import type {
  BackendEvent,
  BrowserInputEvent,
  ConnectionState,
} from './types';
import { TableBackend, type Call } from './table';
import { EventSocket, type SocketFactory, type SocketLike } from './socket';
import {
  browserSessionStorage,
  downloadBlob,
  enc,
  errorFromResponse,
  fallbackExportName,
  filenameFromDisposition,
  readTokens,
  signedOutError,
  TOKEN_STORAGE_KEY,
  type KeyValueStore,
  type TokenResponse,
  type Tokens,
} from './http-support';
import { downloadFleetFile } from './fleets';
import { BackendError, errorMessage } from './errors';


export {
  TERMINAL_ATTACH_TIMEOUT_MS,
  WS_CLOSE_TOKEN_EXPIRED,
  WS_PROTOCOL,
  WS_RETRY_MAX_MS,
  WS_RETRY_MIN_MS,
  type SocketFactory,
  type SocketLike,
} from './socket';
export { errorFromResponse, fallbackExportName, filenameFromDisposition } from './http-support';

export interface HttpBackendOptions {
  fetch?: typeof fetch;
  storage?: KeyValueStore;
  openSocket?: SocketFactory;
  /** Prefix for API paths; '' means the page's own origin. */
  baseUrl?: string;
  /** Full ws:// or wss:// URL of /api/ws; by default derived from the page's location. */
  wsUrl?: string;
  /** Saves an exported file; by default a Blob URL clicked through an <a download>. */
  saveFile?: (blob: Blob, filename: string) => void;
}

export class HttpBackend extends TableBackend implements Backend {
  readonly kind = 'web' as const;
  readonly auth: Auth;

  private readonly fetchFn: typeof fetch;
  private readonly storage: KeyValueStore;
  private readonly baseUrl: string;
  private readonly saveFile: (blob: Blob, filename: string) => void;

  private tokens: Tokens | null;
  private refreshing: Promise<Tokens | null> | null = null;
  private readonly authListeners = new Set<(signedIn: boolean) => void>();
  /** The backend's events and the attached terminals and browser panes: one socket. */
  private readonly events: EventSocket;

  constructor(opts: HttpBackendOptions = {}) {
    // Under serve, a stolen access token alone must not read saved passwords.
    super({ revealNeedsPassword: true, saveFleetFile: downloadFleetFile });
    this.fetchFn = opts.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.storage = opts.storage ?? browserSessionStorage();
    const openSocket: SocketFactory =
      opts.openSocket ?? ((url, protocols) => new WebSocket(url, protocols) as unknown as SocketLike);
    this.baseUrl = opts.baseUrl ?? '';
    this.saveFile = opts.saveFile ?? downloadBlob;
    this.tokens = readTokens(this.storage);
    this.events = new EventSocket(
      {
        tokens: () => this.tokens,
        refresh: () => this.refresh(),
        // An authenticated call finds out whether the tokens are why a handshake failed (and
        // refreshes or signs out if so). Best effort: the socket retries either way.
        probe: () => void this.json('GET', '/api/version').catch(() => {}),
      },
      openSocket,
      opts.wsUrl,
    );
    this.auth = {
      signedIn: () => this.tokens !== null,
      login: (password, unlock) => this.login(password, unlock),
      logout: () => this.logout(),
      onChange: (handler) => {
        this.authListeners.add(handler);
        return () => this.authListeners.delete(handler);
      },
    };
  }

  // ---- API methods -------------------------------------------------------------------------

  /** A call of the table: POST /api/rpc/{name} with its arguments. */
  protected call: Call = (name, args) => this.json('POST', `/api/rpc/${name}`, args);

  async exportWorkspace(id: string): Promise<void> {
    const res = await this.checked('GET', `/api/workspaces/${enc(id)}/export`);
    const text = await res.text();
    const filename =
      filenameFromDisposition(res.headers.get('Content-Disposition')) ?? fallbackExportName(text, id);
    this.saveFile(new Blob([text], { type: 'application/json' }), filename);
  }


  // ---- terminals ---------------------------------------------------------------------------


  terminalAttach(paneId: string, tabId: string): Promise<Uint8Array> {
    return this.events.attach(paneId, tabId);
  }

  async terminalDetach(paneId: string, tabId: string): Promise<void> {
    this.events.detach(paneId, tabId);
  }

  /** Typing while the socket is down is dropped: the status bar shows the connection is gone. */
  terminalInput(paneId: string, tabId: string, data: string): void {
    this.events.send({ type: 'term.input', paneId, tabId, data });
  }

  terminalResize(paneId: string, tabId: string, cols: number, rows: number): void {
    this.events.resize(paneId, tabId, cols, rows);
  }

  // ---- browser panes -----------------------------------------------------------------------

  /** Sent now if the socket is up, else when it opens; and again after every reconnect. */
  browserWatch(paneId: string): void {
    this.events.watch(paneId);
  }

  browserUnwatch(paneId: string): void {
    this.events.unwatch(paneId);
  }

  /** Input while the socket is down is dropped, as terminal typing is. */
  browserInput(paneId: string, event: BrowserInputEvent): void {
    this.events.send({ type: 'browser.input', paneId, event });
  }

  // ---- SSH servers -------------------------------------------------------------------------


  // ---- events ------------------------------------------------------------------------------

  subscribe(handler: (e: BackendEvent) => void): () => void {
    return this.events.subscribe(handler);
  }

  onConnectionChange(handler: (s: ConnectionState) => void): () => void {
    return this.events.onConnectionChange(handler);
  }

  // ---- auth --------------------------------------------------------------------------------

  private async login(password: string, unlock?: string): Promise<void> {
    const res = await this.request(this.url('/api/login'), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(unlock ? { password, unlock } : { password }),
    });
    if (!res.ok) throw await errorFromResponse(res);
    this.setTokens((await res.json()) as TokenResponse);
  }

  /**
   * Signs out here at once, then asks the server to end the session so the tokens stop working
   * everywhere. Best effort: if the server is unreachable the tokens die when they expire.
   */
  private logout(): void {
    const used = this.tokens;
    this.dropTokens();
    if (!used) return;
    this.send('POST', '/api/logout', {}, used.accessToken).catch(() => {
      // Best effort: see above.
    });
  }

  /**
   * One refresh at a time: concurrent 401s share it. Resolves null when the server refused the
   * refresh token (the tokens are dropped and the login screen shows); rejects on network trouble,
   * which must not sign the user out.
   */
  private refresh(): Promise<Tokens | null> {
    this.refreshing ??= this.doRefresh().finally(() => {
      this.refreshing = null;
    });
    return this.refreshing;
  }

  private async doRefresh(): Promise<Tokens | null> {
    const current = this.tokens;
    if (!current) return null;
    const res = await this.request(this.url('/api/refresh'), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ refreshToken: current.refreshToken }),
    });
    if (res.status === 401) {
      this.dropTokens();
      return null;
    }
    if (!res.ok) throw await errorFromResponse(res);
    this.setTokens((await res.json()) as TokenResponse);
    return this.tokens;
  }

  private setTokens(t: TokenResponse): void {
    const wasSignedIn = this.tokens !== null;
    this.tokens = {
      accessToken: t.accessToken,
      refreshToken: t.refreshToken,
      expiresAt: Date.now() + t.expiresIn * 1000,
    };
    try {
      this.storage.setItem(TOKEN_STORAGE_KEY, JSON.stringify(this.tokens));
    } catch {
      // Best effort: without storage the session just does not survive a reload.
    }
    if (!wasSignedIn) {
      this.notifyAuth();
      this.events.ensure();
    }
  }

  private dropTokens(): void {
    const wasSignedIn = this.tokens !== null;
    this.tokens = null;
    try {
      this.storage.removeItem(TOKEN_STORAGE_KEY);
    } catch {
      // Best effort: storage may be unavailable; the in-memory tokens are gone either way.
    }
    this.events.close();
    if (wasSignedIn) this.notifyAuth();
  }

  private notifyAuth(): void {
    const signedIn = this.tokens !== null;
    for (const h of [...this.authListeners]) h(signedIn);
  }

  // ---- requests ----------------------------------------------------------------------------

  private async json<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await this.checked(
      method,
      path,
      body === undefined ? {} : { body: JSON.stringify(body), contentType: 'application/json' },
    );
    if (res.status === 204) return undefined as T;
    const text = await res.text();
    return (text ? JSON.parse(text) : undefined) as T;
  }

  /** Sends an authenticated request and turns a non-2xx answer into a BackendError. */
  private async checked(
    method: string,
    path: string,
    init: { body?: string; contentType?: string } = {},
  ): Promise<Response> {
    const res = await this.authorized(method, path, init);
    if (!res.ok) throw await errorFromResponse(res);
    return res;
  }

  /** On 401: refresh once and retry once; if that fails too, sign out. */
  private async authorized(
    method: string,
    path: string,
    init: { body?: string; contentType?: string },
  ): Promise<Response> {
    const used = this.tokens;
    if (!used) throw signedOutError();
    const res = await this.send(method, path, init, used.accessToken);
    if (res.status !== 401) return res;

    // Another request may already have refreshed while this one was in flight.
    const fresh =
      this.tokens && this.tokens.accessToken !== used.accessToken
        ? this.tokens
        : await this.refresh();
    if (!fresh) throw signedOutError();
    const retry = await this.send(method, path, init, fresh.accessToken);
    if (retry.status === 401) {
      const err = await errorFromResponse(retry, true);
      this.dropTokens();
      throw err;
    }
    return retry;
  }

  private send(
    method: string,
    path: string,
    init: { body?: string; contentType?: string },
    accessToken: string,
  ): Promise<Response> {
    const headers: Record<string, string> = { Authorization: `Bearer ${accessToken}` };
    if (init.contentType) headers['Content-Type'] = init.contentType;
    return this.request(this.url(path), { method, headers, body: init.body });
  }

  /** fetch, with a failure to reach the server (fetch's bare TypeError) explained to the user. */
  private async request(url: string, init: RequestInit): Promise<Response> {
    try {
      return await this.fetchFn(url, init);
    } catch (err) {
      throw new BackendError(
        `Could not reach the ClusterSpace server (${errorMessage(err)}): check that it is running and the network is up`,
      );
    }
  }

  private url(path: string): string {
    return this.baseUrl + path;
  }

}

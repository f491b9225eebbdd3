// Web transport for `clusterspace serve`: JSON over fetch with JWT bearer tokens, and backend
// events over one WebSocket that reconnects on its own.
import type { Auth, Backend } from './index';
import type {
  BackendEvent,
  BrowserInputEvent,
  BrowserPromptAnswer,
  BrowserTab,
  ConnectionState,
  ConvertRequest,
  Discovered,
  LaunchTemplate,
  PageInfo,
  PaneLaunch,
  PanePatch,
  PriceTable,
  Provider,
  ProviderInput,
  ProviderList,
  RemoteSession,
  SSHServer,
  SSHServerInput,
  TabInfo,
  TestResult,
  Workspace,
  WorkspaceList,
} from './types';
import {
  normalizeBrowserTab,
  normalizeBrowserTabs,
  normalizeLaunchTemplates,
  normalizePageInfo,
  normalizeRemoteSessions,
  normalizeSSHServer,
  normalizeSSHServers,
  normalizeTab,
  normalizeTabs,
  TERMINAL_TOPIC,
  wireConvertRequest,
  wireProviderInput,
  wireSSHInput,
} from './types';
import { base64ToBytes, tabKey } from './terminal';
import { HttpChat } from './chat';
import { HttpFleets } from './fleets';
import { HttpCatalog } from './catalog';
import { HttpExtensions } from './extensions';
import { HttpGoals } from './goals';
import { HttpLogins } from './logins';
import { HttpRecipes } from './recipes';
import { BackendError, errorMessage, type BusyPane } from './errors';

/** First reconnect delay after the socket drops; doubled per failed try up to the max. */
export const WS_RETRY_MIN_MS = 500;
/** Cap on the reconnect delay so a restarted server is found within a few seconds. */
export const WS_RETRY_MAX_MS = 5000;
/** The server closes the socket with this code when the access token expires. */
export const WS_CLOSE_TOKEN_EXPIRED = 4001;
/** Browsers cannot set headers on a WebSocket, so the token travels as a subprotocol. */
export const WS_PROTOCOL = 'clusterspace.v1';
/**
 * How long terminalAttach waits for the server's replay. The replay is at most the scrollback
 * (a few MB), so a healthy server answers in well under a second; 10 s means it is not coming.
 */
export const TERMINAL_ATTACH_TIMEOUT_MS = 10_000;
/** Refresh before opening a socket when the token has less than this left, to skip a doomed dial. */
const TOKEN_EXPIRY_MARGIN_MS = 10_000;
/**
 * Tokens live in sessionStorage: they survive a page reload (so a reload does not ask for the
 * password again) but not closing the tab, and other tabs or sites never see them. localStorage
 * would keep a long-lived refresh token on disk after the browser closes.
 */
const TOKEN_STORAGE_KEY = 'clusterspace.tokens';

interface Tokens {
  accessToken: string;
  refreshToken: string;
  /** Epoch milliseconds when the access token expires, from the server's expiresIn. */
  expiresAt: number;
}

interface TokenResponse {
  accessToken: string;
  refreshToken: string;
  expiresIn: number;
}

type KeyValueStore = Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>;

/** The parts of a browser WebSocket this transport uses, so tests can hand in a fake. */
export interface SocketLike {
  onopen: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onclose: ((ev: { code: number; reason?: string }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
  send(data: string): void;
  close(code?: number, reason?: string): void;
}

/** A tab this client watches: re-attached (and re-sized) whenever the socket reopens. */
interface Attachment {
  paneId: string;
  tabId: string;
  /** The last size sent, so a resize made while the socket was down still arrives. */
  size?: { cols: number; rows: number };
}

/** A terminalAttach call waiting for its 'replay' event. */
interface AttachWaiter {
  resolve: (replay: Uint8Array) => void;
  reject: (err: Error) => void;
  timer: ReturnType<typeof setTimeout>;
}
export type SocketFactory = (url: string, protocols: string[]) => SocketLike;

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

export class HttpBackend implements Backend {
  readonly kind = 'web' as const;
  readonly auth: Auth;
  readonly goals: HttpGoals;
  readonly catalog: HttpCatalog;
  readonly chat: HttpChat;
  readonly recipes: HttpRecipes;
  readonly logins: HttpLogins;
  readonly fleets: HttpFleets;
  readonly extensions: HttpExtensions;

  private readonly fetchFn: typeof fetch;
  private readonly storage: KeyValueStore;
  private readonly openSocket: SocketFactory;
  private readonly baseUrl: string;
  private readonly wsUrlOverride?: string;
  private readonly saveFile: (blob: Blob, filename: string) => void;

  private tokens: Tokens | null;
  private refreshing: Promise<Tokens | null> | null = null;
  private readonly authListeners = new Set<(signedIn: boolean) => void>();

  private readonly eventHandlers = new Set<(e: BackendEvent) => void>();
  private readonly connectionListeners = new Set<(s: ConnectionState) => void>();
  private connection: ConnectionState = 'disconnected';
  private socket: SocketLike | null = null;
  private dialing = false;
  private retryTimer: ReturnType<typeof setTimeout> | null = null;
  private retryDelay = WS_RETRY_MIN_MS;

  private readonly attachments = new Map<string, Attachment>();
  /** Per tab, in the order their term.attach frames went out: replays answer them in that order. */
  private readonly attachWaiters = new Map<string, AttachWaiter[]>();
  /** Browser panes this client watches: watched again whenever the socket reopens. */
  private readonly watchedPanes = new Set<string>();

  constructor(opts: HttpBackendOptions = {}) {
    this.fetchFn = opts.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.storage = opts.storage ?? browserSessionStorage();
    this.openSocket =
      opts.openSocket ?? ((url, protocols) => new WebSocket(url, protocols) as unknown as SocketLike);
    this.baseUrl = opts.baseUrl ?? '';
    this.wsUrlOverride = opts.wsUrl;
    this.saveFile = opts.saveFile ?? downloadBlob;
    this.tokens = readTokens(this.storage);
    const json = <T,>(method: string, path: string, body?: unknown) => this.json<T>(method, path, body);
    this.goals = new HttpGoals(json);
    this.catalog = new HttpCatalog(json);
    this.chat = new HttpChat(json);
    this.recipes = new HttpRecipes(json);
    this.logins = new HttpLogins(json);
    this.fleets = new HttpFleets(json);
    this.extensions = new HttpExtensions(json);
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

  async version(): Promise<string> {
    const body = await this.json<{ version: string }>('GET', '/api/version');
    return body.version;
  }
  listWorkspaces(): Promise<WorkspaceList> {
    return this.json('GET', '/api/workspaces');
  }
  createWorkspace(name: string): Promise<Workspace> {
    return this.json('POST', '/api/workspaces', { name });
  }
  renameWorkspace(id: string, name: string): Promise<Workspace> {
    return this.json('PATCH', `/api/workspaces/${enc(id)}`, { name });
  }
  async deleteWorkspace(id: string, force = false): Promise<void> {
    await this.json('DELETE', `/api/workspaces/${enc(id)}${force ? '?force=true' : ''}`);
  }
  async activateWorkspace(id: string): Promise<void> {
    await this.json('POST', `/api/workspaces/${enc(id)}/activate`);
  }
  setGrid(id: string, rows: number, cols: number, force = false): Promise<Workspace> {
    return this.json('PUT', `/api/workspaces/${enc(id)}/grid`, { rows, cols, force });
  }
  setWeights(id: string, rowWeights: number[], colWeights: number[]): Promise<Workspace> {
    return this.json('PUT', `/api/workspaces/${enc(id)}/weights`, { rowWeights, colWeights });
  }
  swapPanes(id: string, paneA: string, paneB: string): Promise<Workspace> {
    return this.json('POST', `/api/workspaces/${enc(id)}/swap`, { paneA, paneB });
  }
  updatePane(id: string, paneId: string, patch: PanePatch): Promise<Workspace> {
    return this.json('PATCH', `/api/workspaces/${enc(id)}/panes/${enc(paneId)}`, patch);
  }
  async exportWorkspace(id: string): Promise<void> {
    const res = await this.checked('GET', `/api/workspaces/${enc(id)}/export`);
    const text = await res.text();
    const filename =
      filenameFromDisposition(res.headers.get('Content-Disposition')) ?? fallbackExportName(text, id);
    this.saveFile(new Blob([text], { type: 'application/json' }), filename);
  }
  async importWorkspace(json: string): Promise<Workspace> {
    const res = await this.checked('POST', '/api/workspaces/import', {
      body: json,
      contentType: 'application/json',
    });
    return (await res.json()) as Workspace;
  }
  createWorkspaceGrid(name: string, rows: number, cols: number): Promise<Workspace> {
    return this.json('POST', '/api/workspaces', { name, rows, cols });
  }
  focusPane(id: string, paneId: string): Promise<Workspace> {
    return this.json('PUT', `/api/workspaces/${enc(id)}/focus`, { paneId });
  }
  toggleMaximizePane(id: string, paneId: string): Promise<Workspace> {
    return this.json('POST', `/api/workspaces/${enc(id)}/panes/${enc(paneId)}/maximize`);
  }
  setPaneLaunch(id: string, paneId: string, launch: PaneLaunch | null, force = false): Promise<Workspace> {
    const query = force ? '?force=true' : '';
    return this.json('PUT', `/api/workspaces/${enc(id)}/panes/${enc(paneId)}/launch${query}`, launch);
  }
  convertPane(id: string, paneId: string, req: ConvertRequest): Promise<Workspace> {
    return this.json('POST', `/api/workspaces/${enc(id)}/panes/${enc(paneId)}/convert`, wireConvertRequest(req));
  }
  async launchTemplates(): Promise<LaunchTemplate[]> {
    return normalizeLaunchTemplates(await this.json('GET', '/api/launch-templates'));
  }

  listProviders(): Promise<ProviderList> {
    return this.json('GET', '/api/providers');
  }
  saveProvider(id: string, input: ProviderInput): Promise<Provider> {
    const body = wireProviderInput(input);
    return id
      ? this.json('PUT', `/api/providers/${enc(id)}`, body)
      : this.json('POST', '/api/providers', body);
  }
  async deleteProvider(id: string): Promise<void> {
    await this.json('DELETE', `/api/providers/${enc(id)}`);
  }
  setDefaultProviders(defaultId: string, criticDefaultId: string): Promise<ProviderList> {
    return this.json('PUT', '/api/providers/defaults', { defaultId, criticDefaultId });
  }
  testProvider(id: string): Promise<TestResult> {
    return this.json('POST', `/api/providers/${enc(id)}/test`);
  }
  testUnsavedProvider(id: string, input: ProviderInput): Promise<TestResult> {
    return this.json('POST', `/api/providers/test${id ? `?id=${enc(id)}` : ''}`, wireProviderInput(input));
  }
  async discoverProviders(host: string): Promise<Discovered[]> {
    const body = await this.json<{ servers: Discovered[] | null }>('POST', '/api/providers/discover', { host });
    return body.servers ?? [];
  }
  async prices(): Promise<PriceTable> {
    const body = await this.json<{ prices: PriceTable | null }>('GET', '/api/prices');
    return body.prices ?? {};
  }
  async setPrices(prices: PriceTable): Promise<void> {
    await this.json('PUT', '/api/prices', { prices });
  }

  // ---- terminals ---------------------------------------------------------------------------

  async terminalOpen(paneId: string, cols: number, rows: number): Promise<TabInfo[]> {
    const body = await this.json<{ tabs: unknown }>('POST', `/api/panes/${enc(paneId)}/terminal`, { cols, rows });
    return normalizeTabs(body?.tabs);
  }
  async terminalNewTab(paneId: string, cols: number, rows: number): Promise<TabInfo> {
    return normalizeTab(await this.json('POST', `/api/panes/${enc(paneId)}/terminal/tabs`, { cols, rows }));
  }
  async terminalTabs(paneId: string): Promise<TabInfo[]> {
    const body = await this.json<{ tabs: unknown }>('GET', `/api/panes/${enc(paneId)}/terminal/tabs`);
    return normalizeTabs(body?.tabs);
  }
  async terminalRestart(paneId: string, tabId: string): Promise<void> {
    await this.json('POST', `${tabPath(paneId, tabId)}/restart`);
  }
  async terminalCloseTab(paneId: string, tabId: string): Promise<void> {
    await this.json('DELETE', tabPath(paneId, tabId));
  }
  async terminalActivate(paneId: string, tabId: string): Promise<void> {
    await this.json('POST', `${tabPath(paneId, tabId)}/activate`);
  }
  async terminalSetBroadcast(paneId: string, include: boolean): Promise<void> {
    await this.json('PUT', `/api/panes/${enc(paneId)}/broadcast`, { include });
  }

  /**
   * Asks the server for the tab's screen over the WebSocket; resolves when its 'replay' event
   * arrives. Sent now if the socket is up, else as soon as it opens; either way it counts as
   * attached from here on, so every reconnect attaches it again.
   */
  terminalAttach(paneId: string, tabId: string): Promise<Uint8Array> {
    const key = tabKey(paneId, tabId);
    if (!this.attachments.has(key)) this.attachments.set(key, { paneId, tabId });
    const replay = new Promise<Uint8Array>((resolve, reject) => {
      const waiter: AttachWaiter = {
        resolve,
        reject,
        timer: setTimeout(() => {
          this.dropWaiter(key, waiter);
          reject(
            new BackendError(
              `The server sent no screen for this terminal within ${TERMINAL_ATTACH_TIMEOUT_MS / 1000} s: ` +
                'check the connection (status bar), then reload the page',
            ),
          );
        }, TERMINAL_ATTACH_TIMEOUT_MS),
      };
      const list = this.attachWaiters.get(key) ?? [];
      list.push(waiter);
      this.attachWaiters.set(key, list);
    });
    this.sendFrame({ type: 'term.attach', paneId, tabId });
    return replay;
  }

  async terminalDetach(paneId: string, tabId: string): Promise<void> {
    this.attachments.delete(tabKey(paneId, tabId));
    this.sendFrame({ type: 'term.detach', paneId, tabId });
  }

  /** Typing while the socket is down is dropped: the status bar shows the connection is gone. */
  terminalInput(paneId: string, tabId: string, data: string): void {
    this.sendFrame({ type: 'term.input', paneId, tabId, data });
  }

  terminalResize(paneId: string, tabId: string, cols: number, rows: number): void {
    const a = this.attachments.get(tabKey(paneId, tabId));
    if (a) a.size = { cols, rows };
    this.sendFrame({ type: 'term.resize', paneId, tabId, cols, rows });
  }

  // ---- browser panes -----------------------------------------------------------------------

  async browserOpen(paneId: string, url: string, width: number, height: number): Promise<BrowserTab[]> {
    const body = await this.json<{ tabs: unknown }>('POST', browserPath(paneId), { url, width, height });
    return normalizeBrowserTabs(body?.tabs);
  }
  async browserTabs(paneId: string): Promise<BrowserTab[]> {
    const body = await this.json<{ tabs: unknown }>('GET', `${browserPath(paneId)}/tabs`);
    return normalizeBrowserTabs(body?.tabs);
  }
  async browserNewTab(paneId: string, url: string): Promise<BrowserTab> {
    return normalizeBrowserTab(await this.json('POST', `${browserPath(paneId)}/tabs`, { url }));
  }
  async browserCloseTab(paneId: string, tabId: string): Promise<void> {
    await this.json('DELETE', `${browserPath(paneId)}/tabs/${enc(tabId)}`);
  }
  async browserActivate(paneId: string, tabId: string): Promise<BrowserTab> {
    return normalizeBrowserTab(await this.json('POST', `${browserPath(paneId)}/tabs/${enc(tabId)}/activate`));
  }
  async browserNavigate(paneId: string, url: string): Promise<PageInfo> {
    return normalizePageInfo(await this.json('POST', `${browserPath(paneId)}/navigate`, { url }));
  }
  async browserBack(paneId: string): Promise<PageInfo> {
    return normalizePageInfo(await this.json('POST', `${browserPath(paneId)}/back`));
  }
  async browserForward(paneId: string): Promise<PageInfo> {
    return normalizePageInfo(await this.json('POST', `${browserPath(paneId)}/forward`));
  }
  async browserReload(paneId: string): Promise<PageInfo> {
    return normalizePageInfo(await this.json('POST', `${browserPath(paneId)}/reload`));
  }
  async browserViewport(paneId: string, width: number, height: number): Promise<void> {
    await this.json('PUT', `${browserPath(paneId)}/viewport`, { width, height });
  }
  async browserReconnect(paneId: string): Promise<BrowserTab> {
    return normalizeBrowserTab(await this.json('POST', `${browserPath(paneId)}/reconnect`));
  }

  /** Sent now if the socket is up, else when it opens; and again after every reconnect. */
  browserWatch(paneId: string): void {
    this.watchedPanes.add(paneId);
    this.sendFrame({ type: 'browser.watch', paneId });
  }

  browserUnwatch(paneId: string): void {
    this.watchedPanes.delete(paneId);
    this.sendFrame({ type: 'browser.unwatch', paneId });
  }

  /** Input while the socket is down is dropped, as terminal typing is. */
  async browserAnswerPrompt(paneId: string, answer: BrowserPromptAnswer): Promise<void> {
    await this.json('POST', `/api/panes/${enc(paneId)}/browser/prompt`, answer);
  }
  browserInput(paneId: string, event: BrowserInputEvent): void {
    this.sendFrame({ type: 'browser.input', paneId, event });
  }

  // ---- SSH servers -------------------------------------------------------------------------

  async listSSHServers(): Promise<SSHServer[]> {
    const body = await this.json<{ servers: unknown }>('GET', '/api/ssh-servers');
    return normalizeSSHServers(body?.servers);
  }
  async saveSSHServer(id: string, input: SSHServerInput): Promise<SSHServer> {
    const body = wireSSHInput(input);
    return normalizeSSHServer(
      id ? await this.json('PUT', `/api/ssh-servers/${enc(id)}`, body) : await this.json('POST', '/api/ssh-servers', body),
    );
  }
  async deleteSSHServer(id: string): Promise<void> {
    await this.json('DELETE', `/api/ssh-servers/${enc(id)}`);
  }
  async terminalOpenSSH(paneId: string, serverId: string, cols: number, rows: number): Promise<TabInfo> {
    return normalizeTab(await this.json('POST', `/api/panes/${enc(paneId)}/terminal/ssh`, { serverId, cols, rows }));
  }
  async remoteSessions(serverId: string): Promise<RemoteSession[]> {
    const body = await this.json<{ sessions: unknown }>('GET', `/api/ssh-servers/${enc(serverId)}/sessions`);
    return normalizeRemoteSessions(body?.sessions);
  }
  async killRemoteSession(serverId: string, name: string): Promise<void> {
    await this.json('DELETE', `/api/ssh-servers/${enc(serverId)}/sessions/${enc(name)}`);
  }

  /** Sends a client frame if the socket is open; false when it is not. */
  private sendFrame(frame: Record<string, unknown>): boolean {
    const ws = this.socket;
    if (!ws || this.connection !== 'connected') return false;
    try {
      ws.send(JSON.stringify(frame));
      return true;
    } catch {
      // The socket is closing; its close handler reconnects and re-attaches.
      return false;
    }
  }

  /** After the socket (re)opens: the server forgot this connection's viewers, so attach again. */
  private reattach(): void {
    for (const [key, a] of this.attachments) {
      // One frame per waiting call (a view may have re-attached while the socket was down), so
      // each gets its replay; at least one, so the screen is restored.
      const frames = Math.max(1, this.attachWaiters.get(key)?.length ?? 0);
      for (let i = 0; i < frames; i++) this.sendFrame({ type: 'term.attach', paneId: a.paneId, tabId: a.tabId });
      if (a.size) this.sendFrame({ type: 'term.resize', paneId: a.paneId, tabId: a.tabId, ...a.size });
    }
    // Likewise the server forgot which browser panes this connection watched.
    for (const paneId of this.watchedPanes) this.sendFrame({ type: 'browser.watch', paneId });
  }

  /**
   * A replay answers the oldest waiting terminalAttach of its tab. One nobody waits for follows a
   * reconnect: it is handed on as an 'output' event with resync set, so the view redraws from
   * it. Returns the event to deliver, if any.
   */
  private takeReplay(event: BackendEvent): BackendEvent | null {
    const d = (event.data ?? {}) as { paneId?: unknown; tabId?: unknown; data?: unknown };
    // Go sends an empty scrollback (a nil []byte) as null.
    if (d.data === null || d.data === undefined) d.data = '';
    if (typeof d.paneId !== 'string' || typeof d.tabId !== 'string' || typeof d.data !== 'string') {
      console.warn('clusterspace: ignoring a malformed terminal replay', event);
      return null;
    }
    const key = tabKey(d.paneId, d.tabId);
    const waiter = this.attachWaiters.get(key)?.[0];
    if (waiter) {
      this.dropWaiter(key, waiter);
      let bytes: Uint8Array;
      try {
        bytes = base64ToBytes(d.data);
      } catch {
        waiter.reject(new BackendError('The server sent a terminal screen that is not valid base64: reload the page'));
        return null;
      }
      waiter.resolve(bytes);
      return null;
    }
    if (!this.attachments.has(key)) return null; // detached meanwhile
    return {
      topic: TERMINAL_TOPIC,
      type: 'output',
      data: { paneId: d.paneId, tabId: d.tabId, data: d.data, resync: true },
    };
  }

  /**
   * The server answers a term.attach it cannot serve (no such tab) with a terminal 'error'
   * event instead of a replay: the oldest waiting attach of that tab fails with its message.
   */
  private failAttach(event: BackendEvent): void {
    const d = (event.data ?? {}) as { paneId?: unknown; tabId?: unknown; error?: unknown };
    if (typeof d.paneId !== 'string' || typeof d.tabId !== 'string') return;
    const key = tabKey(d.paneId, d.tabId);
    const waiter = this.attachWaiters.get(key)?.[0];
    if (!waiter) return;
    this.dropWaiter(key, waiter);
    waiter.reject(new BackendError(typeof d.error === 'string' && d.error ? d.error : 'The server could not attach this terminal'));
  }

  private dropWaiter(key: string, waiter: AttachWaiter): void {
    clearTimeout(waiter.timer);
    const list = this.attachWaiters.get(key);
    if (!list) return;
    const rest = list.filter((w) => w !== waiter);
    if (rest.length) this.attachWaiters.set(key, rest);
    else this.attachWaiters.delete(key);
  }

  // ---- events ------------------------------------------------------------------------------

  subscribe(handler: (e: BackendEvent) => void): () => void {
    this.eventHandlers.add(handler);
    this.ensureSocket();
    return () => {
      this.eventHandlers.delete(handler);
      if (this.eventHandlers.size === 0) this.closeSocket();
    };
  }

  onConnectionChange(handler: (s: ConnectionState) => void): () => void {
    this.connectionListeners.add(handler);
    handler(this.connection);
    return () => this.connectionListeners.delete(handler);
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
      this.ensureSocket();
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
    this.closeSocket();
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

  // ---- WebSocket ---------------------------------------------------------------------------

  private wsUrl(): string {
    if (this.wsUrlOverride) return this.wsUrlOverride;
    const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
    return `${scheme}//${location.host}/api/ws`;
  }

  /** The socket is wanted while someone listens and we hold tokens. */
  private wanted(): boolean {
    return this.eventHandlers.size > 0 && this.tokens !== null;
  }

  private ensureSocket(): void {
    if (!this.wanted() || this.socket || this.dialing || this.retryTimer) return;
    void this.dial();
  }

  private async dial(): Promise<void> {
    this.dialing = true;
    this.setConnection('connecting');
    let tokens = this.tokens;
    try {
      if (tokens && tokens.expiresAt - Date.now() < TOKEN_EXPIRY_MARGIN_MS) {
        tokens = await this.refresh();
      }
    } catch {
      this.dialing = false;
      this.scheduleReconnect();
      return;
    }
    this.dialing = false;
    if (!tokens || !this.wanted()) {
      this.setConnection('disconnected');
      return;
    }

    const ws = this.openSocket(this.wsUrl(), [WS_PROTOCOL, `bearer.${tokens.accessToken}`]);
    this.socket = ws;
    let opened = false;
    ws.onopen = () => {
      if (this.socket !== ws) return;
      opened = true;
      this.retryDelay = WS_RETRY_MIN_MS;
      this.setConnection('connected');
      this.reattach();
    };
    ws.onmessage = (m) => {
      if (this.socket !== ws) return;
      let event = parseEvent(m.data);
      if (!event) {
        console.warn('clusterspace: ignoring a malformed event from the server', m.data);
        return;
      }
      if (event.topic === TERMINAL_TOPIC && event.type === 'replay') {
        event = this.takeReplay(event);
        if (!event) return;
      } else if (event.topic === TERMINAL_TOPIC && event.type === 'error') {
        this.failAttach(event);
      }
      for (const h of [...this.eventHandlers]) h(event);
    };
    ws.onerror = () => {
      // The close event that always follows carries what we need.
    };
    ws.onclose = (ev) => {
      if (this.socket !== ws) return; // closed on purpose, or replaced
      this.socket = null;
      this.setConnection('disconnected');
      if (!this.wanted()) return;
      if (ev.code === WS_CLOSE_TOKEN_EXPIRED) {
        this.refresh().then(
          (fresh) => {
            if (fresh) this.ensureSocket();
          },
          () => this.scheduleReconnect(),
        );
        return;
      }
      if (!opened) {
        // A refused handshake looks like any other failure to a browser. An authenticated call
        // finds out whether the tokens are the reason (and refreshes or signs out if so).
        this.json('GET', '/api/version').catch(() => {
          // Best effort: the reconnect below retries either way.
        });
      }
      this.scheduleReconnect();
    };
  }

  private scheduleReconnect(): void {
    if (this.retryTimer || !this.wanted()) return;
    const delay = this.retryDelay;
    this.retryDelay = Math.min(this.retryDelay * 2, WS_RETRY_MAX_MS);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.ensureSocket();
    }, delay);
  }

  private closeSocket(): void {
    if (this.retryTimer) {
      clearTimeout(this.retryTimer);
      this.retryTimer = null;
    }
    const ws = this.socket;
    this.socket = null;
    this.retryDelay = WS_RETRY_MIN_MS;
    if (ws) {
      try {
        ws.close(1000, 'client done');
      } catch {
        // Best effort: the socket may already be closing.
      }
    }
    this.setConnection('disconnected');
  }

  private setConnection(s: ConnectionState): void {
    if (this.connection === s) return;
    this.connection = s;
    for (const h of [...this.connectionListeners]) h(s);
  }
}

function enc(segment: string): string {
  return encodeURIComponent(segment);
}

function tabPath(paneId: string, tabId: string): string {
  return `/api/panes/${enc(paneId)}/terminal/tabs/${enc(tabId)}`;
}

function browserPath(paneId: string): string {
  return `/api/panes/${enc(paneId)}/browser`;
}

function signedOutError(): BackendError {
  return new BackendError('You are signed out: sign in again to continue', {
    status: 401,
    authRequired: true,
  });
}

/** Builds the error a person sees from a failed response: the backend's own words when it sent some. */
export async function errorFromResponse(res: Response, authRequired = false): Promise<BackendError> {
  let text = '';
  try {
    text = await res.text();
  } catch {
    // Best effort: the status alone still explains something.
  }
  let body: { error?: unknown; field?: unknown; retryAfter?: unknown; busy?: unknown } = {};
  try {
    body = text ? JSON.parse(text) : {};
  } catch {
    // Not JSON (a proxy's HTML page, say): fall back to the raw text below.
  }
  const message =
    typeof body.error === 'string' && body.error
      ? body.error
      : `The server answered ${res.status}${res.statusText ? ` ${res.statusText}` : ''}` +
        (text.trim() ? `: ${text.trim().slice(0, 200)}` : '');
  return new BackendError(message, {
    status: res.status,
    field: typeof body.field === 'string' ? body.field : undefined,
    retryAfter: typeof body.retryAfter === 'number' ? body.retryAfter : undefined,
    busy: Array.isArray(body.busy) ? (body.busy as BusyPane[]) : undefined,
    authRequired,
  });
}

function parseEvent(data: unknown): BackendEvent | null {
  if (typeof data !== 'string') return null;
  try {
    const v = JSON.parse(data) as Partial<BackendEvent>;
    if (typeof v.topic === 'string' && typeof v.type === 'string') {
      return { topic: v.topic, type: v.type, data: v.data };
    }
  } catch {
    // Fall through: reported by the caller.
  }
  return null;
}

function readTokens(storage: KeyValueStore): Tokens | null {
  try {
    const raw = storage.getItem(TOKEN_STORAGE_KEY);
    if (!raw) return null;
    const t = JSON.parse(raw) as Partial<Tokens>;
    if (
      typeof t.accessToken === 'string' &&
      typeof t.refreshToken === 'string' &&
      typeof t.expiresAt === 'number'
    ) {
      return { accessToken: t.accessToken, refreshToken: t.refreshToken, expiresAt: t.expiresAt };
    }
  } catch {
    // A corrupt entry is the same as none: the user signs in again.
  }
  return null;
}

function browserSessionStorage(): KeyValueStore {
  try {
    if (typeof sessionStorage !== 'undefined') return sessionStorage;
  } catch {
    // Some privacy modes throw on access; fall back to memory below.
  }
  const mem = new Map<string, string>();
  return {
    getItem: (k) => mem.get(k) ?? null,
    setItem: (k, v) => void mem.set(k, v),
    removeItem: (k) => void mem.delete(k),
  };
}

/** Reads the filename from a Content-Disposition header (RFC 6266 filename* wins over filename). */
export function filenameFromDisposition(header: string | null): string | null {
  if (!header) return null;
  const star = /filename\*\s*=\s*([^']*)'[^']*'([^;]+)/i.exec(header);
  if (star) {
    try {
      return decodeURIComponent(star[2].trim().replace(/^"|"$/g, ''));
    } catch {
      // Malformed percent-encoding: try the plain parameter.
    }
  }
  const plain = /filename\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;]+))/i.exec(header);
  if (plain) {
    const name = (plain[1] ?? plain[2] ?? '').replace(/\\(.)/g, '$1').trim();
    return name || null;
  }
  return null;
}

/** `<workspace name>.clusterspace.json`, with the name taken from the exported JSON when present. */
export function fallbackExportName(exportJson: string, id: string): string {
  let name = '';
  try {
    const v = JSON.parse(exportJson);
    name = typeof v?.name === 'string' ? v.name : typeof v?.workspace?.name === 'string' ? v.workspace.name : '';
  } catch {
    // The server sent something unparseable; the id still names the file.
  }
  const safe = (name || `workspace-${id}`).replace(/[\\/:*?"<>|\u0000-\u001f]/g, '_').trim();
  return `${safe || 'workspace'}.clusterspace.json`;
}

function downloadBlob(blob: Blob, filename: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  a.style.display = 'none';
  document.body.appendChild(a);
  a.click();
  a.remove();
  // Revoking at once can cancel the download in some browsers; a moment later is safe.
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}


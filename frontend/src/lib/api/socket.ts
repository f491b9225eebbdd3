// The backend's events over one WebSocket that reconnects on its own, and the terminal tabs and
// browser panes this client views through it, attached again after every reconnect. The web
// transport (http.ts) owns one and lends it its tokens.
import type { BackendEvent, ConnectionState } from './types';
import { TERMINAL_TOPIC } from './types';
import { base64ToBytes, tabKey } from './terminal';
import { BackendError } from './errors';

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


/** What the socket needs of the client that owns it: its tokens, and the means to renew them. */
export interface SocketHost {
  /** The access token and when it expires (epoch ms), or null when signed out. */
  tokens(): SocketTokens | null;
  /** Renews the tokens: null when the server refused them (signed out); rejects on network trouble. */
  refresh(): Promise<SocketTokens | null>;
  /** Makes an authenticated call that finds out whether the tokens are why a handshake failed. */
  probe(): void;
}

export interface SocketTokens {
  accessToken: string;
  expiresAt: number;
}

/** Refresh before opening a socket when the token has less than this left, to skip a doomed dial. */
const TOKEN_EXPIRY_MARGIN_MS = 10_000;

export class EventSocket {
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


  constructor(
    private readonly host: SocketHost,
    private readonly openSocket: SocketFactory,
    private readonly wsUrlOverride?: string,
  ) {}

  /**
   * Asks the server for the tab's screen over the WebSocket; resolves when its 'replay' event
   * arrives. Sent now if the socket is up, else as soon as it opens; either way it counts as
   * attached from here on, so every reconnect attaches it again.
   */
  attach(paneId: string, tabId: string): Promise<Uint8Array> {
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
    this.send({ type: 'term.attach', paneId, tabId });
    return replay;
  }

  detach(paneId: string, tabId: string): void {
    this.attachments.delete(tabKey(paneId, tabId));
    this.send({ type: 'term.detach', paneId, tabId });
  }

  resize(paneId: string, tabId: string, cols: number, rows: number): void {
    const a = this.attachments.get(tabKey(paneId, tabId));
    if (a) a.size = { cols, rows };
    this.send({ type: 'term.resize', paneId, tabId, cols, rows });
  }

  /** Sent now if the socket is up, else when it opens; and again after every reconnect. */
  watch(paneId: string): void {
    this.watchedPanes.add(paneId);
    this.send({ type: 'browser.watch', paneId });
  }

  unwatch(paneId: string): void {
    this.watchedPanes.delete(paneId);
    this.send({ type: 'browser.unwatch', paneId });
  }

  /** Sends a client frame if the socket is open; false when it is not. */
  send(frame: Record<string, unknown>): boolean {
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
      for (let i = 0; i < frames; i++) this.send({ type: 'term.attach', paneId: a.paneId, tabId: a.tabId });
      if (a.size) this.send({ type: 'term.resize', paneId: a.paneId, tabId: a.tabId, ...a.size });
    }
    // Likewise the server forgot which browser panes this connection watched.
    for (const paneId of this.watchedPanes) this.send({ type: 'browser.watch', paneId });
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


  subscribe(handler: (e: BackendEvent) => void): () => void {
    this.eventHandlers.add(handler);
    this.ensure();
    return () => {
      this.eventHandlers.delete(handler);
      if (this.eventHandlers.size === 0) this.close();
    };
  }

  onConnectionChange(handler: (s: ConnectionState) => void): () => void {
    this.connectionListeners.add(handler);
    handler(this.connection);
    return () => this.connectionListeners.delete(handler);
  }


  private wsUrl(): string {
    if (this.wsUrlOverride) return this.wsUrlOverride;
    const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
    return `${scheme}//${location.host}/api/ws`;
  }

  /** The socket is wanted while someone listens and we hold tokens. */
  private wanted(): boolean {
    return this.eventHandlers.size > 0 && this.host.tokens() !== null;
  }

  /** Opens the socket if someone listens and the client holds tokens (after a sign-in). */
  ensure(): void {
    if (!this.wanted() || this.socket || this.dialing || this.retryTimer) return;
    void this.dial();
  }

  private async dial(): Promise<void> {
    this.dialing = true;
    this.setConnection('connecting');
    let tokens = this.host.tokens();
    try {
      if (tokens && tokens.expiresAt - Date.now() < TOKEN_EXPIRY_MARGIN_MS) {
        tokens = await this.host.refresh();
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
        this.host.refresh().then(
          (fresh) => {
            if (fresh) this.ensure();
          },
          () => this.scheduleReconnect(),
        );
        return;
      }
      if (!opened) {
        // A refused handshake looks like any other failure to a browser. An authenticated call
        // finds out whether the tokens are the reason (and refreshes or signs out if so).
        this.host.probe();
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
      this.ensure();
    }, delay);
  }

  /** Closes the socket and stops reconnecting (no listener left, or signed out). */
  close(): void {
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

// Fakes for the web transport's tests: a recording fetch, storage in memory, a scripted
// WebSocket. Shared by http.test.ts and http-stream.test.ts.
import { vi } from 'vitest';
import { HttpBackend, type HttpBackendOptions, type SocketLike } from './http';

// ---- fakes ----------------------------------------------------------------------------------

export interface Call {
  method: string;
  url: string;
  auth: string | null;
  contentType: string | null;
  body: string | undefined;
}

export type Route = (call: Call) => Response | Promise<Response>;

/** A fetch that records every call and answers from `route`. */
export function fakeFetch(route: Route) {
  const calls: Call[] = [];
  const fn = vi.fn(async (input: RequestInfo | URL, init?: RequestInit) => {
    const headers = new Headers(init?.headers);
    const call: Call = {
      method: init?.method ?? 'GET',
      url: String(input),
      auth: headers.get('Authorization'),
      contentType: headers.get('Content-Type'),
      body: init?.body as string | undefined,
    };
    calls.push(call);
    return route(call);
  });
  return { fetch: fn as unknown as typeof fetch, calls };
}

/**
 * An HttpBackend whose fetch answers from `route` (see fakeFetch), signed in unless `opts` gives
 * it other storage. `calls` records its requests; `fetch` is the fake, for a second backend.
 */
export function webBackend(route: Route, opts: HttpBackendOptions = {}) {
  const f = fakeFetch(route);
  return { api: new HttpBackend({ fetch: f.fetch, storage: signedInStorage(), ...opts }), calls: f.calls, fetch: f.fetch };
}

export function memoryStorage() {
  const m = new Map<string, string>();
  return {
    getItem: (k: string) => m.get(k) ?? null,
    setItem: (k: string, v: string) => void m.set(k, v),
    removeItem: (k: string) => void m.delete(k),
    map: m,
  };
}

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'Content-Type': 'application/json', ...headers },
  });
}

export const tokens = (n: number) => ({ accessToken: `access-${n}`, refreshToken: `refresh-${n}`, expiresIn: 900 });

/** Storage already holding a session, as after a page reload. */
export function signedInStorage(n = 1) {
  const s = memoryStorage();
  s.setItem(
    'clusterspace.tokens',
    JSON.stringify({ accessToken: `access-${n}`, refreshToken: `refresh-${n}`, expiresAt: Date.now() + 900_000 }),
  );
  return s;
}

export const list = { workspaces: [], activeId: 'w1' };

export class FakeSocket implements SocketLike {
  onopen: SocketLike['onopen'] = null;
  onmessage: SocketLike['onmessage'] = null;
  onclose: SocketLike['onclose'] = null;
  onerror: SocketLike['onerror'] = null;
  closedByClient = false;
  /** Client frames, parsed. */
  sent: Array<Record<string, unknown>> = [];
  constructor(
    readonly url: string,
    readonly protocols: string[],
  ) {}
  send(data: string) {
    this.sent.push(JSON.parse(data));
  }
  close() {
    this.closedByClient = true;
  }
  serverOpen() {
    this.onopen?.({});
  }
  serverSend(data: unknown) {
    this.onmessage?.({ data: typeof data === 'string' ? data : JSON.stringify(data) });
  }
  serverClose(code: number) {
    this.onclose?.({ code });
  }
}

export function socketFactory() {
  const sockets: FakeSocket[] = [];
  const openSocket = (url: string, protocols: string[]) => {
    const s = new FakeSocket(url, protocols);
    sockets.push(s);
    return s;
  };
  return { sockets, openSocket };
}


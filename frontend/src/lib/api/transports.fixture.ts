// Both transports over recorded answers, for tests of a domain's calls: the desktop's one
// binding App.Call and the web's POST /api/rpc/{name}, each answering a call from `answers`
// (golden JSON that backend/api's tests wrote from a real engine) and recording what was sent.
import { vi } from 'vitest';
import { HttpBackend } from './http';
import { WailsBackend, type WailsApp } from './wails';
import type { CallName } from './table';

export type Answers = Partial<Record<CallName, unknown>>;

/** A refusal as both doors send it: the web's status and the table's error body. */
export interface Refusal {
  status: number;
  body: { error: string; field?: string; task?: string; retryAfter?: number };
}

/** The desktop: App.Call answers from `answers`, or rejects with the refusal's JSON (as Go does). */
export function desktop(answers: Answers, refuse?: Refusal) {
  const Call = vi.fn(async (name: string, _args: unknown) => {
    if (refuse) throw JSON.stringify(refuse.body);
    return answers[name as CallName] ?? null;
  });
  const api = new WailsBackend({ Call } as unknown as WailsApp, undefined);
  return { api, Call, sent: () => Call.mock.calls as [string, unknown][] };
}

/**
 * The web: the server answers POST /api/rpc/{name} from `answers` (204 for none), or with the
 * refusal. sent() lists the calls as [name, args].
 */
export function web(answers: Answers, refuse?: Refusal) {
  const requests: [string, unknown][] = [];
  const fetch = vi.fn(async (url: RequestInfo | URL, init?: RequestInit) => {
    const u = String(url);
    if (!u.startsWith('/api/rpc/')) {
      return new Response(JSON.stringify({ error: `${u} is not a call of the table` }), { status: 404, headers: { 'Content-Type': 'application/json' } });
    }
    const name = u.slice('/api/rpc/'.length) as CallName;
    requests.push([name, init?.body ? JSON.parse(String(init.body)) : undefined]);
    if (refuse) return new Response(JSON.stringify(refuse.body), { status: refuse.status, headers: { 'Content-Type': 'application/json' } });
    const body = answers[name];
    return body === undefined
      ? new Response(null, { status: 204 })
      : new Response(JSON.stringify(body), { status: 200, headers: { 'Content-Type': 'application/json' } });
  });
  return { api: signedInHttp(fetch), sent: () => requests };
}

/** An HttpBackend signed in (a token good for a minute) over `fetch`, with a socket that never opens. */
export function signedInHttp(fetch: (url: RequestInfo | URL, init?: RequestInit) => Promise<Response>): HttpBackend {
  const storage = new Map<string, string>([
    ['clusterspace.tokens', JSON.stringify({ accessToken: 'a', refreshToken: 'r', expiresAt: Date.now() + 60_000 })],
  ]);
  return new HttpBackend({
    fetch: fetch as unknown as typeof globalThis.fetch,
    storage: { getItem: (k) => storage.get(k) ?? null, setItem: (k, v) => void storage.set(k, v), removeItem: (k) => void storage.delete(k) },
    openSocket: () => ({ close() {}, send() {} }) as never,
  });
}

/** Both doors, named, for a test that runs the same steps on each. */
export function bothDoors(answers: Answers, refuse?: Refusal) {
  return [
    { door: 'desktop', ...desktop(answers, refuse) },
    { door: 'web', ...web(answers, refuse) },
  ];
}

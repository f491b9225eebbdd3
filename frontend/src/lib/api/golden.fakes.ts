// Both transports over fakes that answer from golden files (testdata/*.json, written by
// backend/api's golden tests from a real engine) and record every call, for the tests of the
// table's callers (goals.test.ts, chat.test.ts).
import { vi } from 'vitest';
import { HttpBackend } from './http';
import { WailsBackend, type WailsApp } from './wails';
import type { CallName } from './table';

export type Golden = Partial<Record<CallName, unknown>>;

/** How a refusal travels: the desktop rejects with the error body's JSON, the web answers with a status. */
export interface Refusal {
  status: number;
  body: { error: string; field?: string; text?: string; busy?: unknown[] };
}

/** A desktop backend whose one binding answers from `golden` (or refuses) and records the calls. */
export function desktop(golden: Golden, refuse?: Refusal) {
  const Call = vi.fn(async (name: string, _args: unknown) => {
    if (refuse) throw JSON.stringify(refuse.body);
    return golden[name as CallName] ?? null;
  });
  return { api: new WailsBackend({ Call } as unknown as WailsApp, undefined), Call };
}

/** A web backend whose server answers from `golden` (or refuses) and records the requests. */
export function web(golden: Golden, refuse?: Refusal) {
  const requests: { url: string; body: unknown }[] = [];
  const fetch = vi.fn(async (url: RequestInfo | URL, init?: RequestInit) => {
    const u = String(url);
    requests.push({ url: u, body: init?.body ? JSON.parse(String(init.body)) : undefined });
    const json = { 'Content-Type': 'application/json' };
    if (refuse) return new Response(JSON.stringify(refuse.body), { status: refuse.status, headers: json });
    const body = golden[u.replace('/api/rpc/', '') as CallName];
    return body === undefined ? new Response(null, { status: 204 }) : new Response(JSON.stringify(body), { status: 200, headers: json });
  });
  const storage = new Map<string, string>([['clusterspace.tokens', JSON.stringify({ accessToken: 'a', refreshToken: 'r', expiresAt: Date.now() + 60_000 })]]);
  const api = new HttpBackend({
    fetch: fetch as unknown as typeof globalThis.fetch,
    storage: { getItem: (k) => storage.get(k) ?? null, setItem: (k, v) => void storage.set(k, v), removeItem: (k) => void storage.delete(k) },
    openSocket: () => ({ close() {}, send() {} }) as never,
  });
  return { api, requests };
}

/** The calls each transport sent, as [name, arguments], to compare with what the test expects. */
export function sentOn(d: ReturnType<typeof desktop>, w: ReturnType<typeof web>) {
  return {
    desktop: d.Call.mock.calls.map(([name, args]) => [name, args]),
    web: w.requests.map((r) => [r.url.replace('/api/rpc/', ''), r.body]),
  };
}

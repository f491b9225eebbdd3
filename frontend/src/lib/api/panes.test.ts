// The pane wire of issue 16 on both transports: focus, maximize, launch settings, convert (and
// its "something runs here" refusal), launch templates, a workspace with a given grid.
import { describe, expect, it, vi } from 'vitest';
import { BackendError } from './errors';
import { HttpBackend } from './http';
import type { Workspace } from './types';

// ---- HTTP: a fetch that records each call and answers from a route --------------------------

interface Call {
  method: string;
  url: string;
  body: string | undefined;
}

function fakeFetch(route: (c: Call) => Response) {
  const calls: Call[] = [];
  const fn = vi.fn(async (input: RequestInfo | URL, init?: RequestInit) => {
    const call = { method: init?.method ?? 'GET', url: String(input), body: init?.body as string | undefined };
    calls.push(call);
    return route(call);
  });
  return { fetch: fn as unknown as typeof fetch, calls };
}

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });
}

function signedIn() {
  const m = new Map<string, string>([
    ['clusterspace.tokens', JSON.stringify({ accessToken: 'a', refreshToken: 'r', expiresAt: Date.now() + 900_000 })],
  ]);
  return { getItem: (k: string) => m.get(k) ?? null, setItem: (k: string, v: string) => void m.set(k, v), removeItem: (k: string) => void m.delete(k) };
}

const workspace: Workspace = {
  id: 'ws 1',
  name: 'W',
  position: 0,
  rows: 1,
  cols: 2,
  rowWeights: [1],
  colWeights: [1, 1],
  panes: [
    { id: 'pane-a', kind: 'terminal', label: 'Terminal 1.1', row: 0, col: 0, launch: { template: 'claude', command: 'claude' } },
    { id: 'pane-b', kind: 'browser', label: 'Browser 1.2', row: 0, col: 1 },
  ],
  focusedPaneId: 'pane-a',
  maximizedPaneId: '',
  createdAt: '2026-01-01T00:00:00Z',
  updatedAt: '2026-01-01T00:00:00Z',
};

function http(route: (c: Call) => Response = () => json(200, workspace)) {
  const f = fakeFetch(route);
  return { api: new HttpBackend({ fetch: f.fetch, storage: signedIn(), openSocket: () => ({}) as never }), calls: f.calls };
}

describe('HttpBackend pane routes', () => {
  it('returns the workspace with its focused and maximized pane and the launch settings', async () => {
    const { api } = http(() => json(200, { ...workspace, maximizedPaneId: 'pane-a' }));
    const ws = await api.toggleMaximizePane('ws 1', 'pane-a');
    expect(ws.maximizedPaneId).toBe('pane-a');
    expect(ws.focusedPaneId).toBe('pane-a');
    expect(ws.panes[0].launch).toEqual({ template: 'claude', command: 'claude' });
  });

  it('hands a 409 "force" refusal over with what runs, so the UI can ask', async () => {
    const { api } = http(() =>
      json(409, { error: 'vim is running in pane pane-a; convert with force to end it', field: 'force', busy: [{ paneId: 'pane-a', busy: ['vim', 'npm test'] }] }),
    );
    const err = await api.convertPane('ws 1', 'pane-a', { kind: 'browser' }).catch((e) => e);
    expect(err).toBeInstanceOf(BackendError);
    expect(err.status).toBe(409);
    expect(err.field).toBe('force');
    expect(err.busy).toEqual([{ paneId: 'pane-a', busy: ['vim', 'npm test'] }]);
    expect(err.message).toBe('vim is running in pane pane-a; convert with force to end it');
  });

  it('passes on a refusal that cannot be forced, naming its field', async () => {
    const { api } = http(() => json(409, { error: 'a goal works in pane pane-a: stop it first', field: 'paneId' }));
    const err = await api.convertPane('ws 1', 'pane-a', { kind: 'browser', force: true }).catch((e) => e);
    expect(err.field).toBe('paneId');
    expect(err.busy).toBeUndefined();
    expect(err.message).toBe('a goal works in pane pane-a: stop it first');
  });

  it('takes a null or wrapped template list', async () => {
    expect(await http(() => json(200, null)).api.launchTemplates()).toEqual([]);
    expect(await http(() => json(200, { templates: [{ id: 'codex', name: 'Codex CLI', command: 'codex', installed: true }] })).api.launchTemplates()).toEqual([
      { id: 'codex', name: 'Codex CLI', command: 'codex', installed: true },
    ]);
  });
});




// The pane wire of issue 16 on both transports: focus, maximize, launch settings, convert (and
// its "something runs here" refusal), launch templates, a workspace with a given grid.
import { describe, expect, it, vi } from 'vitest';
import { BackendError } from './errors';
import { HttpBackend } from './http';
import type { Workspace } from './types';
import { paneError, WailsBackend, type WailsApp } from './wails';

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
  it('calls each route with its method, escaped path and exact body', async () => {
    const { api, calls } = http();
    await api.focusPane('ws 1', 'pane-b');
    await api.toggleMaximizePane('ws 1', 'pane-b');
    await api.setPaneLaunch('ws 1', 'pane-a', { template: 'python', dir: '/srv' });
    await api.setPaneLaunch('ws 1', 'pane-a', null, true);
    await api.convertPane('ws 1', 'pane-a', { kind: 'browser', url: 'http://localhost:3000' });
    await api.convertPane('ws 1', 'pane-b', { kind: 'terminal', template: 'aider', force: true });
    await api.convertPane('ws 1', 'pane-b', { kind: 'terminal', url: '', template: '', force: false });
    await api.createWorkspaceGrid('Agents', 1, 3);
    expect(calls.map((c) => [c.method, c.url, c.body ? JSON.parse(c.body) : undefined])).toEqual([
      ['PUT', '/api/workspaces/ws%201/focus', { paneId: 'pane-b' }],
      ['POST', '/api/workspaces/ws%201/panes/pane-b/maximize', undefined],
      ['PUT', '/api/workspaces/ws%201/panes/pane-a/launch', { template: 'python', dir: '/srv' }],
      ['PUT', '/api/workspaces/ws%201/panes/pane-a/launch?force=true', null],
      ['POST', '/api/workspaces/ws%201/panes/pane-a/convert', { kind: 'browser', url: 'http://localhost:3000' }],
      ['POST', '/api/workspaces/ws%201/panes/pane-b/convert', { kind: 'terminal', template: 'aider', force: true }],
      ['POST', '/api/workspaces/ws%201/panes/pane-b/convert', { kind: 'terminal' }],
      ['POST', '/api/workspaces', { name: 'Agents', rows: 1, cols: 3 }],
    ]);
  });

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

  it('lists launch templates, filling what Go leaves out and keeping "not installed"', async () => {
    const { api, calls } = http(() =>
      json(200, [
        { id: 'shell', name: 'Shell', command: '', installed: true },
        { id: 'claude', name: 'Claude Code', command: 'claude', install: 'npm install -g @anthropic-ai/claude-code', installed: false },
        { id: 'python', name: 'Python', command: 'python3', args: ['-q'], installed: true },
      ]),
    );
    expect(await api.launchTemplates()).toEqual([
      { id: 'shell', name: 'Shell', command: '', installed: true },
      { id: 'claude', name: 'Claude Code', command: 'claude', install: 'npm install -g @anthropic-ai/claude-code', installed: false },
      { id: 'python', name: 'Python', command: 'python3', args: ['-q'], installed: true },
    ]);
    expect(calls[0]).toMatchObject({ method: 'GET', url: '/api/launch-templates' });
  });

  it('takes a null or wrapped template list', async () => {
    expect(await http(() => json(200, null)).api.launchTemplates()).toEqual([]);
    expect(await http(() => json(200, { templates: [{ id: 'codex', name: 'Codex CLI', command: 'codex', installed: true }] })).api.launchTemplates()).toEqual([
      { id: 'codex', name: 'Codex CLI', command: 'codex', installed: true },
    ]);
  });
});

// ---- Wails: the bound App methods ---------------------------------------------------------

function wails(over: Partial<WailsApp>) {
  return new WailsBackend(over as WailsApp, undefined);
}

describe('WailsBackend pane methods', () => {
  it('calls the bound methods with the same arguments the HTTP routes carry', async () => {
    const app = {
      FocusPane: vi.fn(async () => workspace),
      ToggleMaximizePane: vi.fn(async () => workspace),
      SetPaneLaunch: vi.fn(async () => workspace),
      ConvertPane: vi.fn(async () => workspace),
      CreateWorkspaceGrid: vi.fn(async () => workspace),
      LaunchTemplates: vi.fn(async () => null),
    };
    const api = wails(app);
    await api.focusPane('w1', 'pane-b');
    await api.toggleMaximizePane('w1', 'pane-b');
    await api.setPaneLaunch('w1', 'pane-a', { template: 'custom', command: 'htop', args: ['-d', '5'] });
    await api.setPaneLaunch('w1', 'pane-a', null, true);
    await api.convertPane('w1', 'pane-a', { kind: 'terminal', template: 'codex', url: '', force: false });
    await api.createWorkspaceGrid('Agents', 2, 3);
    expect(await api.launchTemplates()).toEqual([]);
    expect(app.FocusPane).toHaveBeenCalledWith('w1', 'pane-b');
    expect(app.ToggleMaximizePane).toHaveBeenCalledWith('w1', 'pane-b');
    expect(app.SetPaneLaunch.mock.calls).toEqual([
      ['w1', 'pane-a', { template: 'custom', command: 'htop', args: ['-d', '5'] }, false],
      ['w1', 'pane-a', null, true],
    ]);
    expect(app.ConvertPane).toHaveBeenCalledWith('w1', 'pane-a', { kind: 'terminal', template: 'codex' });
    expect(app.CreateWorkspaceGrid).toHaveBeenCalledWith('Agents', 2, 3);
  });

  it('reads the field from the Go error text, so the UI can ask before forcing', async () => {
    const api = wails({ ConvertPane: () => Promise.reject('force: vim is running in pane pane-a; convert with force to end it') });
    const err = await api.convertPane('w1', 'pane-a', { kind: 'browser' }).catch((e) => e);
    expect(err).toBeInstanceOf(BackendError);
    expect(err.field).toBe('force');
    expect(err.message).toBe('force: vim is running in pane pane-a; convert with force to end it');
  });

  it("reads what runs from the engine's busy error, and a goal's refusal as one of paneId", async () => {
    const busy = await wails({
      ConvertPane: () => Promise.reject('pane pane-a is running vim, npm; converting it ends that: ask first, then convert with force'),
    })
      .convertPane('w1', 'pane-a', { kind: 'browser' })
      .catch((e) => e);
    expect([busy.field, busy.busy]).toEqual(['force', [{ paneId: '', label: '', busy: ['vim', 'npm'] }]]);
    const goal = await wails({
      ConvertPane: () =>
        Promise.reject('goal g-1 works in pane pane-a: it cannot be converted or relaunched until the goal ends (abort or pause it first)'),
    })
      .convertPane('w1', 'pane-a', { kind: 'browser', force: true })
      .catch((e) => e);
    expect([goal.field, goal.busy]).toEqual(['paneId', undefined]);
  });

  it('keeps the list of what runs when the rejection carries the JSON error body', async () => {
    const body = { error: 'vim is running', field: 'force', busy: ['vim'] };
    for (const rejection of [JSON.stringify(body), body]) {
      const err = await wails({ ConvertPane: () => Promise.reject(rejection) })
        .convertPane('w1', 'pane-a', { kind: 'browser' })
        .catch((e) => e);
      expect([err.message, err.field, err.busy]).toEqual(['vim is running', 'force', [{ paneId: '', label: '', busy: ['vim'] }]]);
    }
  });

  it('names the field of other pane errors, and none for text without a known prefix', async () => {
    const api = wails({ SetPaneLaunch: () => Promise.reject('dir: "srv" is not an absolute path; give the full path of the directory') });
    const err = await api.setPaneLaunch('w1', 'pane-a', { template: 'shell', dir: 'srv' }).catch((e) => e);
    expect(err.field).toBe('dir');
    expect(paneError('pane pane-x not found in workspace "W" — call list_panes for the current ids').field).toBeUndefined();
  });
});

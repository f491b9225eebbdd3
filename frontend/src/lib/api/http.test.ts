import { describe, expect, it, vi } from 'vitest';
import { BackendError, busyPanes } from './errors';
import {
  fallbackExportName,
  filenameFromDisposition,
  HttpBackend,
} from './http';
import {
  fakeFetch,
  memoryStorage,
  json,
  tokens,
  signedInStorage,
  list,
} from './http.fakes';

// ---- requests and tokens --------------------------------------------------------------------

describe('HttpBackend requests', () => {
  it('sends the bearer token and parses the answer', async () => {
    const f = fakeFetch(() => json(200, list));
    const api = new HttpBackend({ fetch: f.fetch, storage: signedInStorage() });
    await expect(api.listWorkspaces()).resolves.toEqual(list);
    expect(f.calls).toEqual([
      { method: 'GET', url: '/api/workspaces', auth: 'Bearer access-1', contentType: null, body: undefined },
    ]);
  });

  it('on 401 refreshes once, retries with the new token, and keeps the new tokens', async () => {
    const storage = signedInStorage();
    const f = fakeFetch((c) => {
      if (c.url === '/api/refresh') return json(200, tokens(2));
      return c.auth === 'Bearer access-2' ? json(200, list) : json(401, { error: 'token expired' });
    });
    const api = new HttpBackend({ fetch: f.fetch, storage });
    await expect(api.listWorkspaces()).resolves.toEqual(list);
    expect(f.calls.map((c) => `${c.url} ${c.auth ?? c.body}`)).toEqual([
      '/api/workspaces Bearer access-1',
      '/api/refresh {"refreshToken":"refresh-1"}',
      '/api/workspaces Bearer access-2',
    ]);
    expect(JSON.parse(storage.getItem('clusterspace.tokens')!).accessToken).toBe('access-2');
    expect(api.auth.signedIn()).toBe(true);
  });

  it('signs out when the refresh is refused, without retrying', async () => {
    const storage = signedInStorage();
    const f = fakeFetch((c) =>
      c.url === '/api/refresh' ? json(401, { error: 'refresh token expired' }) : json(401, { error: 'token expired' }),
    );
    const api = new HttpBackend({ fetch: f.fetch, storage });
    const seen: boolean[] = [];
    api.auth.onChange((s) => seen.push(s));

    const err = await api.listWorkspaces().catch((e) => e);
    expect(err).toBeInstanceOf(BackendError);
    expect(err.authRequired).toBe(true);
    expect(f.calls).toHaveLength(2);
    expect(api.auth.signedIn()).toBe(false);
    expect(seen).toEqual([false]);
    expect(storage.getItem('clusterspace.tokens')).toBeNull();
  });

  it('retries only once: a second 401 signs out', async () => {
    const f = fakeFetch((c) => (c.url === '/api/refresh' ? json(200, tokens(2)) : json(401, { error: 'no access' })));
    const api = new HttpBackend({ fetch: f.fetch, storage: signedInStorage() });
    const err = await api.version().catch((e) => e);
    expect(err.authRequired).toBe(true);
    expect(err.message).toBe('no access');
    expect(f.calls.map((c) => c.url)).toEqual(['/api/version', '/api/refresh', '/api/version']);
    expect(api.auth.signedIn()).toBe(false);
  });

  it('shares one refresh between requests that hit 401 together', async () => {
    let releaseRefresh!: () => void;
    const refreshGate = new Promise<void>((r) => (releaseRefresh = r));
    const f = fakeFetch(async (c) => {
      if (c.url === '/api/refresh') {
        await refreshGate;
        return json(200, tokens(2));
      }
      return c.auth === 'Bearer access-2' ? json(200, { version: '1.0' }) : json(401, { error: 'expired' });
    });
    const api = new HttpBackend({ fetch: f.fetch, storage: signedInStorage() });
    const both = Promise.all([api.version(), api.version()]);
    await vi.waitFor(() => expect(f.calls.filter((c) => c.url === '/api/refresh')).toHaveLength(1));
    releaseRefresh();
    await expect(both).resolves.toEqual(['1.0', '1.0']);
    expect(f.calls.filter((c) => c.url === '/api/refresh')).toHaveLength(1);
  });

  it('does not sign out when the refresh fails for network reasons', async () => {
    const f = fakeFetch((c) => {
      if (c.url === '/api/refresh') throw new TypeError('Failed to fetch');
      return json(401, { error: 'expired' });
    });
    const api = new HttpBackend({ fetch: f.fetch, storage: signedInStorage() });
    await expect(api.version()).rejects.toThrow('Failed to fetch');
    expect(api.auth.signedIn()).toBe(true);
  });

  it("surfaces the backend's error message verbatim, with the field it names", async () => {
    const f = fakeFetch(() => json(400, { error: 'rows: must be between 1 and 6, got 9', field: 'rows' }));
    const api = new HttpBackend({ fetch: f.fetch, storage: signedInStorage() });
    const err = await api.setGrid('w1', 9, 2).catch((e) => e);
    expect(err).toBeInstanceOf(BackendError);
    expect(err.message).toBe('rows: must be between 1 and 6, got 9');
    expect(err.field).toBe('rows');
    expect(err.status).toBe(400);
    expect(f.calls[0]).toMatchObject({
      method: 'PUT',
      url: '/api/workspaces/w1/grid',
      contentType: 'application/json',
      body: '{"rows":9,"cols":2,"force":false}',
    });
  });

  it('carries the busy panes of a refused removal, and forces it when asked', async () => {
    const busy = [{ paneId: 'p3', label: 'Terminal 2.1', busy: ['sleep running in tab 1 (bash)'] }];
    const f = fakeFetch((call) =>
      call.method === 'DELETE' && !call.url.includes('force=true')
        ? json(409, { error: 'deleting workspace "W" would end work in progress (…): confirm to end it', busy })
        : new Response(null, { status: 204 }),
    );
    const api = new HttpBackend({ fetch: f.fetch, storage: signedInStorage() });
    const err = await api.deleteWorkspace('w1').catch((e) => e);
    expect(err.status).toBe(409);
    expect(busyPanes(err)).toEqual(busy);
    await api.deleteWorkspace('w1', true);
    expect(f.calls[1].url).toBe('/api/workspaces/w1?force=true');
  });

  it('explains a failure that carries no JSON error', async () => {
    const f = fakeFetch(() => new Response('upstream down', { status: 502, statusText: 'Bad Gateway' }));
    const api = new HttpBackend({ fetch: f.fetch, storage: signedInStorage() });
    await expect(api.listWorkspaces()).rejects.toThrow('The server answered 502 Bad Gateway: upstream down');
  });

  it('fails as signed out without calling the server when it holds no tokens', async () => {
    const f = fakeFetch(() => json(200, list));
    const api = new HttpBackend({ fetch: f.fetch, storage: memoryStorage() });
    const err = await api.listWorkspaces().catch((e) => e);
    expect(err.authRequired).toBe(true);
    expect(f.calls).toHaveLength(0);
  });

  it('escapes ids in paths and treats 204 as done', async () => {
    const f = fakeFetch(() => new Response(null, { status: 204 }));
    const api = new HttpBackend({ fetch: f.fetch, storage: signedInStorage() });
    await expect(api.deleteWorkspace('a/b c')).resolves.toBeUndefined();
    await expect(api.activateWorkspace('w2')).resolves.toBeUndefined();
    expect(f.calls.map((c) => `${c.method} ${c.url}`)).toEqual([
      'DELETE /api/workspaces/a%2Fb%20c',
      'POST /api/workspaces/w2/activate',
    ]);
  });

  it('sends only the fields of a pane patch that are set', async () => {
    const f = fakeFetch(() => json(200, {}));
    const api = new HttpBackend({ fetch: f.fetch, storage: signedInStorage() });
    await api.updatePane('w1', 'p1', { kind: 'browser' });
    expect(f.calls[0]).toMatchObject({ method: 'PATCH', url: '/api/workspaces/w1/panes/p1', body: '{"kind":"browser"}' });
  });

  it('posts an import as the raw file text', async () => {
    const f = fakeFetch(() => json(201, { id: 'w9' }));
    const api = new HttpBackend({ fetch: f.fetch, storage: signedInStorage() });
    const text = '{"version":1,  "name":"kept exactly"}';
    await expect(api.importWorkspace(text)).resolves.toEqual({ id: 'w9' });
    expect(f.calls[0]).toMatchObject({
      method: 'POST',
      url: '/api/workspaces/import',
      contentType: 'application/json',
      body: text,
    });
  });

  it('saves an export under the name from Content-Disposition, else one built from the workspace name', async () => {
    const saved: Array<{ name: string; text: string }> = [];
    const saveFile = (blob: Blob, name: string) => void blob.text().then((text) => saved.push({ name, text }));
    const exported = '{"name":"Dev box","rows":1}';
    let header: Record<string, string> = { 'Content-Disposition': 'attachment; filename="dev-box.clusterspace.json"' };
    const f = fakeFetch(() => new Response(exported, { status: 200, headers: header }));
    const api = new HttpBackend({ fetch: f.fetch, storage: signedInStorage(), saveFile });

    await api.exportWorkspace('w1');
    header = {};
    await api.exportWorkspace('w1');
    await vi.waitFor(() => expect(saved).toHaveLength(2));
    expect(saved).toEqual([
      { name: 'dev-box.clusterspace.json', text: exported },
      { name: 'Dev box.clusterspace.json', text: exported },
    ]);
    expect(f.calls[0]).toMatchObject({ url: '/api/workspaces/w1/export', auth: 'Bearer access-1' });
  });
});

describe('HttpBackend providers', () => {
  const input = {
    name: 'Local',
    kind: 'openai' as const,
    baseUrl: 'http://127.0.0.1:11434/v1',
    model: 'llama3',
    visionModel: '',
    temperature: null,
    maxTokens: 0,
    thinking: false,
    contextWindow: 0,
  };

  it('creates with POST and edits with PUT, omitting apiKey unless it is set', async () => {
    const f = fakeFetch((c) => json(c.method === 'POST' ? 201 : 200, { id: 'prov-1' }));
    const api = new HttpBackend({ fetch: f.fetch, storage: signedInStorage() });
    await api.saveProvider('', input);
    await api.saveProvider('prov-1', { ...input, apiKey: undefined });
    await api.saveProvider('prov-1', { ...input, apiKey: '' });
    await api.saveProvider('prov/1', { ...input, apiKey: 'sk-new' });
    expect(f.calls.map((c) => `${c.method} ${c.url}`)).toEqual([
      'POST /api/providers',
      'PUT /api/providers/prov-1',
      'PUT /api/providers/prov-1',
      'PUT /api/providers/prov%2F1',
    ]);
    const bodies = f.calls.map((c) => JSON.parse(c.body!));
    expect(bodies[0]).toEqual(input);
    expect('apiKey' in bodies[0]).toBe(false);
    expect('apiKey' in bodies[1]).toBe(false);
    expect(bodies[2].apiKey).toBe('');
    expect(bodies[3].apiKey).toBe('sk-new');
    // temperature null means "the server's default" and must be sent as null, not dropped.
    expect(f.calls[0].body).toContain('"temperature":null');
  });

  it('sends only the input fields, since the server refuses unknown ones', async () => {
    const f = fakeFetch(() => json(200, { id: 'prov-1' }));
    const api = new HttpBackend({ fetch: f.fetch, storage: signedInStorage() });
    const withExtras = { ...input, id: 'prov-1', apiKeySet: true, apiKeyHint: 'sk-…abcd' };
    await api.saveProvider('prov-1', withExtras);
    expect(Object.keys(JSON.parse(f.calls[0].body!)).sort()).toEqual(Object.keys(input).sort());
  });

  it('hands the field of a 400 to the caller', async () => {
    const f = fakeFetch(() => json(400, { error: 'name: must not be empty', field: 'name' }));
    const api = new HttpBackend({ fetch: f.fetch, storage: signedInStorage() });
    const err = await api.saveProvider('', { ...input, name: '' }).catch((e) => e);
    expect(err).toBeInstanceOf(BackendError);
    expect(err.message).toBe('name: must not be empty');
    expect(err.field).toBe('name');
  });

  it('lists, deletes, sets defaults and tests with the documented routes', async () => {
    const list = { providers: [], defaultId: '', criticDefaultId: '', secretsBackend: 'file' };
    const result = { ok: false, message: 'this build has no model layer to test with', latencyMs: 0 };
    const f = fakeFetch((c) => {
      if (c.method === 'DELETE') return new Response(null, { status: 204 });
      if (c.url.endsWith('/test')) return json(200, result);
      return json(200, list);
    });
    const api = new HttpBackend({ fetch: f.fetch, storage: signedInStorage() });
    await expect(api.listProviders()).resolves.toEqual(list);
    await expect(api.deleteProvider('p1')).resolves.toBeUndefined();
    await expect(api.setDefaultProviders('p1', '')).resolves.toEqual(list);
    await expect(api.testProvider('p1')).resolves.toEqual(result);
    expect(f.calls.map((c) => `${c.method} ${c.url} ${c.body ?? ''}`.trim())).toEqual([
      'GET /api/providers',
      'DELETE /api/providers/p1',
      'PUT /api/providers/defaults {"defaultId":"p1","criticDefaultId":""}',
      'POST /api/providers/p1/test',
    ]);
    expect(f.calls.every((c) => c.auth === 'Bearer access-1')).toBe(true);
  });

  it('unwraps discovered servers and the price table', async () => {
    const server = { name: 'Ollama', kind: 'openai', baseUrl: 'http://127.0.0.1:11434/v1', models: ['llama3'] };
    const prices = { 'gpt-4o': { inputPerMTok: 2.5, outputPerMTok: 10 } };
    const f = fakeFetch((c) => {
      if (c.url === '/api/providers/discover') return json(200, { servers: [server] });
      if (c.method === 'PUT') return new Response(null, { status: 204 });
      return json(200, { prices });
    });
    const api = new HttpBackend({ fetch: f.fetch, storage: signedInStorage() });
    await expect(api.discoverProviders('')).resolves.toEqual([server]);
    await expect(api.prices()).resolves.toEqual(prices);
    await expect(api.setPrices(prices)).resolves.toBeUndefined();
    expect(f.calls.map((c) => `${c.method} ${c.url} ${c.body ?? ''}`.trim())).toEqual([
      'POST /api/providers/discover {"host":""}',
      'GET /api/prices',
      `PUT /api/prices ${JSON.stringify({ prices })}`,
    ]);
  });

  it('names the host field when discovery refuses it', async () => {
    const f = fakeFetch(() => json(400, { error: 'host: "http://x" is not a host name', field: 'host' }));
    const api = new HttpBackend({ fetch: f.fetch, storage: signedInStorage() });
    const err = await api.discoverProviders('http://x').catch((e) => e);
    expect(err.field).toBe('host');
  });
});

describe('HttpBackend login', () => {
  it('stores the tokens, so a reload stays signed in', async () => {
    const storage = memoryStorage();
    const f = fakeFetch(() => json(200, tokens(1)));
    const api = new HttpBackend({ fetch: f.fetch, storage });
    const seen: boolean[] = [];
    api.auth.onChange((s) => seen.push(s));
    expect(api.auth.signedIn()).toBe(false);

    await api.auth.login('pw');
    expect(f.calls[0]).toMatchObject({ method: 'POST', url: '/api/login', body: '{"password":"pw"}', auth: null });
    expect(api.auth.signedIn()).toBe(true);
    expect(seen).toEqual([true]);
    expect(new HttpBackend({ fetch: f.fetch, storage }).auth.signedIn()).toBe(true);
  });

  it('rejects a wrong password with the server message', async () => {
    const f = fakeFetch(() => json(401, { error: 'wrong password' }));
    const api = new HttpBackend({ fetch: f.fetch, storage: memoryStorage() });
    await expect(api.auth.login('nope')).rejects.toThrow('wrong password');
    expect(api.auth.signedIn()).toBe(false);
  });

  it('passes on how long a lockout lasts', async () => {
    const f = fakeFetch(() => json(429, { error: 'too many attempts: locked for 30s', retryAfter: 30 }));
    const api = new HttpBackend({ fetch: f.fetch, storage: memoryStorage() });
    const err = await api.auth.login('x').catch((e) => e);
    expect(err.message).toBe('too many attempts: locked for 30s');
    expect(err.retryAfter).toBe(30);
    expect(err.status).toBe(429);
  });

  it('sends the unlock code only when one is given', async () => {
    const f = fakeFetch(() => json(200, tokens(1)));
    const api = new HttpBackend({ fetch: f.fetch, storage: memoryStorage() });
    await api.auth.login('pw', 'ABCD-EFGH-JKMN');
    expect(f.calls[0].body).toBe('{"password":"pw","unlock":"ABCD-EFGH-JKMN"}');
    await api.auth.login('pw', '');
    expect(f.calls[1].body).toBe('{"password":"pw"}');
  });

  it('forgets the tokens on logout and ends the session on the server', () => {
    const storage = signedInStorage();
    const f = fakeFetch(() => new Response(null, { status: 204 }));
    const api = new HttpBackend({ fetch: f.fetch, storage });
    api.auth.logout();
    expect(api.auth.signedIn()).toBe(false);
    expect(storage.getItem('clusterspace.tokens')).toBeNull();
    expect(f.calls).toEqual([
      expect.objectContaining({ method: 'POST', url: '/api/logout', auth: 'Bearer access-1' }),
    ]);
  });

  it('signs out even when the server cannot be reached', async () => {
    const api = new HttpBackend({
      fetch: fakeFetch(() => Promise.reject(new TypeError('Failed to fetch'))).fetch,
      storage: signedInStorage(),
    });
    api.auth.logout();
    await Promise.resolve();
    expect(api.auth.signedIn()).toBe(false);
  });
});

// ---- WebSocket ------------------------------------------------------------------------------

describe('export file names', () => {
  it('reads filename and prefers filename*', () => {
    expect(filenameFromDisposition('attachment; filename="a b.json"')).toBe('a b.json');
    expect(filenameFromDisposition('attachment; filename=plain.json')).toBe('plain.json');
    expect(filenameFromDisposition(`attachment; filename="x.json"; filename*=UTF-8''caf%C3%A9.json`)).toBe('café.json');
    expect(filenameFromDisposition('attachment')).toBeNull();
    expect(filenameFromDisposition(null)).toBeNull();
  });

  it('falls back to the workspace name, made safe for a file system', () => {
    expect(fallbackExportName('{"name":"a/b: c"}', 'w1')).toBe('a_b_ c.clusterspace.json');
    expect(fallbackExportName('{"workspace":{"name":"Nested"}}', 'w1')).toBe('Nested.clusterspace.json');
    expect(fallbackExportName('not json', 'w7')).toBe('workspace-w7.clusterspace.json');
  });
});

// ---- terminals ------------------------------------------------------------------------------

describe('HttpBackend terminal routes', () => {
  const tab = { paneId: 'p1', tabId: 'tab-1', title: 'bash', running: true, cols: 80, rows: 24, confined: false, active: true, pid: 42 };

  it('opens, lists and adds tabs with the documented routes, filling in omitted fields', async () => {
    const f = fakeFetch((c) => {
      if (c.method === 'POST' && c.url.endsWith('/terminal/tabs')) return json(201, { ...tab, tabId: 'tab-2' });
      return json(200, { tabs: [tab] });
    });
    const api = new HttpBackend({ fetch: f.fetch, storage: signedInStorage() });
    const opened = await api.terminalOpen('p1', 120, 40);
    expect(opened).toEqual([{ ...tab, exitCode: null, remote: '' }]);
    await expect(api.terminalTabs('p 1')).resolves.toHaveLength(1);
    await expect(api.terminalNewTab('p1', 100, 30)).resolves.toMatchObject({ tabId: 'tab-2', exitCode: null });
    expect(f.calls.map((c) => `${c.method} ${c.url} ${c.body ?? ''}`.trim())).toEqual([
      'POST /api/panes/p1/terminal {"cols":120,"rows":40}',
      'GET /api/panes/p%201/terminal/tabs',
      'POST /api/panes/p1/terminal/tabs {"cols":100,"rows":30}',
    ]);
    expect(f.calls.every((c) => c.auth === 'Bearer access-1')).toBe(true);
  });

  it('restarts, closes, activates and sets broadcast', async () => {
    const f = fakeFetch(() => new Response(null, { status: 204 }));
    const api = new HttpBackend({ fetch: f.fetch, storage: signedInStorage() });
    await api.terminalRestart('p1', 'tab-1');
    await api.terminalCloseTab('p1', 'tab-1');
    await api.terminalActivate('p1', 'tab/2');
    await api.terminalSetBroadcast('p1', true);
    expect(f.calls.map((c) => `${c.method} ${c.url} ${c.body ?? ''}`.trim())).toEqual([
      'POST /api/panes/p1/terminal/tabs/tab-1/restart',
      'DELETE /api/panes/p1/terminal/tabs/tab-1',
      'POST /api/panes/p1/terminal/tabs/tab%2F2/activate',
      'PUT /api/panes/p1/broadcast {"include":true}',
    ]);
  });

  it("passes on a 404's advice verbatim", async () => {
    const f = fakeFetch(() => json(404, { error: 'pane "p9" has no terminal: restart the pane' }));
    const api = new HttpBackend({ fetch: f.fetch, storage: signedInStorage() });
    await expect(api.terminalRestart('p9', 'tab-1')).rejects.toThrow('pane "p9" has no terminal: restart the pane');
  });
});

describe('HttpBackend browser routes', () => {
  const tab = {
    paneId: 'p1',
    tabId: 'btab-1',
    workspaceId: 'w1',
    url: 'about:blank',
    title: '',
    loading: false,
    crashed: false,
    discarded: false,
    active: true,
    canGoBack: false,
    canGoForward: false,
    prompt: null,
  };
  const page = { tabId: 'btab-1', url: 'https://example.com/', title: 'Example', status: 200, loading: false };

  it('calls every route with its method, path and body', async () => {
    const f = fakeFetch((c) => {
      if (c.url.endsWith('/browser') || c.url.endsWith('/browser/tabs')) {
        return c.method === 'POST' && c.url.endsWith('/tabs') ? json(201, { ...tab, tabId: 'btab-2' }) : json(200, { tabs: [tab] });
      }
      if (/\/(navigate|back|forward|reload)$/.test(c.url)) return json(200, page);
      if (c.url.endsWith('/activate') || c.url.endsWith('/reconnect')) return json(200, tab);
      return new Response(null, { status: 204 });
    });
    const api = new HttpBackend({ fetch: f.fetch, storage: signedInStorage() });
    await expect(api.browserOpen('p1', '', 800, 600)).resolves.toEqual([tab]);
    await expect(api.browserTabs('p 1')).resolves.toEqual([tab]);
    await expect(api.browserNewTab('p1', 'example.com')).resolves.toMatchObject({ tabId: 'btab-2' });
    await api.browserCloseTab('p1', 'btab/2');
    await expect(api.browserActivate('p1', 'btab-1')).resolves.toEqual(tab);
    await expect(api.browserNavigate('p1', 'example.com')).resolves.toEqual(page);
    await api.browserBack('p1');
    await api.browserForward('p1');
    await api.browserReload('p1');
    await api.browserViewport('p1', 1024, 700);
    await expect(api.browserReconnect('p1')).resolves.toEqual(tab);
    await api.browserAnswerPrompt('p1', { proceed: true, username: 'ada', password: 'pw' });
    expect(f.calls.map((c) => `${c.method} ${c.url} ${c.body ?? ''}`.trim())).toEqual([
      'POST /api/panes/p1/browser {"url":"","width":800,"height":600}',
      'GET /api/panes/p%201/browser/tabs',
      'POST /api/panes/p1/browser/tabs {"url":"example.com"}',
      'DELETE /api/panes/p1/browser/tabs/btab%2F2',
      'POST /api/panes/p1/browser/tabs/btab-1/activate',
      'POST /api/panes/p1/browser/navigate {"url":"example.com"}',
      'POST /api/panes/p1/browser/back',
      'POST /api/panes/p1/browser/forward',
      'POST /api/panes/p1/browser/reload',
      'PUT /api/panes/p1/browser/viewport {"width":1024,"height":700}',
      'POST /api/panes/p1/browser/reconnect',
      'POST /api/panes/p1/browser/prompt {"proceed":true,"username":"ada","password":"pw"}',
    ]);
    expect(f.calls.every((c) => c.auth === 'Bearer access-1')).toBe(true);
  });

  it("passes on a navigation's failure verbatim", async () => {
    const f = fakeFetch(() => json(502, { error: 'could not load https://nope.invalid/: net::ERR_NAME_NOT_RESOLVED' }));
    const api = new HttpBackend({ fetch: f.fetch, storage: signedInStorage() });
    await expect(api.browserNavigate('p1', 'nope.invalid')).rejects.toThrow('could not load https://nope.invalid/: net::ERR_NAME_NOT_RESOLVED');
  });
});

describe('HttpBackend SSH servers', () => {
  const server = {
    id: 'ssh-1',
    name: 'build box',
    host: '10.0.0.5',
    port: 2222,
    user: 'ci',
    keyPath: '/home/me/.ssh/id_ed25519',
    passwordSet: true,
    createdAt: '2025-01-01T00:00:00Z',
    updatedAt: '2025-01-01T00:00:00Z',
  };
  const input = { name: 'build box', host: '10.0.0.5', port: 2222, user: 'ci', keyPath: '' };

  it('lists, adds, edits and deletes with the documented routes', async () => {
    const f = fakeFetch((c) => {
      if (c.method === 'GET') return json(200, { servers: [server] });
      if (c.method === 'DELETE') return new Response(null, { status: 204 });
      return json(c.method === 'POST' ? 201 : 200, server);
    });
    const api = new HttpBackend({ fetch: f.fetch, storage: signedInStorage() });
    await expect(api.listSSHServers()).resolves.toEqual([server]);
    await expect(api.saveSSHServer('', input)).resolves.toEqual(server);
    await api.saveSSHServer('ssh-1', { ...input, password: undefined });
    await api.saveSSHServer('ssh-1', { ...input, password: '' });
    await api.saveSSHServer('ssh 1', { ...input, password: 'hunter2' });
    await api.deleteSSHServer('ssh-1');
    expect(f.calls.map((c) => `${c.method} ${c.url} ${c.body ?? ''}`.trim())).toEqual([
      'GET /api/ssh-servers',
      'POST /api/ssh-servers {"name":"build box","host":"10.0.0.5","port":2222,"user":"ci","keyPath":""}',
      'PUT /api/ssh-servers/ssh-1 {"name":"build box","host":"10.0.0.5","port":2222,"user":"ci","keyPath":""}',
      'PUT /api/ssh-servers/ssh-1 {"name":"build box","host":"10.0.0.5","port":2222,"user":"ci","keyPath":"","password":""}',
      'PUT /api/ssh-servers/ssh%201 {"name":"build box","host":"10.0.0.5","port":2222,"user":"ci","keyPath":"","password":"hunter2"}',
      'DELETE /api/ssh-servers/ssh-1',
    ]);
  });

  it('names the field of a bad input', async () => {
    const f = fakeFetch(() => json(400, { error: 'host: "a b" is not a host name or address', field: 'host' }));
    const api = new HttpBackend({ fetch: f.fetch, storage: signedInStorage() });
    const err = await api.saveSSHServer('', { ...input, host: 'a b' }).catch((e) => e);
    expect(err).toBeInstanceOf(BackendError);
    expect(err.field).toBe('host');
    expect(err.message).toBe('host: "a b" is not a host name or address');
  });

  it('opens an SSH tab in a pane, lists and kills remote sessions', async () => {
    const tab = { paneId: 'p1', tabId: 'tab-3', title: 'ssh', running: true, cols: 100, rows: 30, confined: false, active: true, remote: 'ci@10.0.0.5:2222', pid: 9 };
    const f = fakeFetch((c) => {
      if (c.url.endsWith('/terminal/ssh')) return json(201, tab);
      if (c.method === 'GET') return json(200, { sessions: [{ name: 'clusterspace-pane-abcd1234', windows: 2, attached: true, created: '2025-01-01T10:00:00Z', pane: true }, { name: 'misc', windows: 1, attached: false, created: '2025-01-01T09:00:00Z' }] });
      return new Response(null, { status: 204 });
    });
    const api = new HttpBackend({ fetch: f.fetch, storage: signedInStorage() });
    await expect(api.terminalOpenSSH('p1', 'ssh-1', 100, 30)).resolves.toMatchObject({ tabId: 'tab-3', remote: 'ci@10.0.0.5:2222' });
    await expect(api.remoteSessions('ssh-1')).resolves.toEqual([
      { name: 'clusterspace-pane-abcd1234', windows: 2, attached: true, created: '2025-01-01T10:00:00Z', pane: true },
      { name: 'misc', windows: 1, attached: false, created: '2025-01-01T09:00:00Z', pane: false },
    ]);
    await api.killRemoteSession('ssh-1', 'clusterspace-pane-abcd1234');
    expect(f.calls.map((c) => `${c.method} ${c.url} ${c.body ?? ''}`.trim())).toEqual([
      'POST /api/panes/p1/terminal/ssh {"serverId":"ssh-1","cols":100,"rows":30}',
      'GET /api/ssh-servers/ssh-1/sessions',
      'DELETE /api/ssh-servers/ssh-1/sessions/clusterspace-pane-abcd1234',
    ]);
  });

  it("rejects with ssh's own words when the server cannot be reached", async () => {
    const f = fakeFetch(() => json(502, { error: 'ssh: connect to host 10.0.0.5 port 2222: Connection refused' }));
    const api = new HttpBackend({ fetch: f.fetch, storage: signedInStorage() });
    const err = await api.remoteSessions('ssh-1').catch((e) => e);
    expect(err.status).toBe(502);
    expect(err.message).toBe('ssh: connect to host 10.0.0.5 port 2222: Connection refused');
  });
});

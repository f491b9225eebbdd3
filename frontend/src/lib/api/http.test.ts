import { describe, expect, it, vi } from 'vitest';
import { BackendError } from './errors';
import { localProviderInput } from './providers.fixture';
import { bothDoors } from './transports.fixture';
import {
  fallbackExportName,
  filenameFromDisposition,
  HttpBackend,
} from './http';
import {
  webBackend,
  memoryStorage,
  json,
  tokens,
  signedInStorage,
  list,
} from './http.fakes';

/** A call of a signed-in backend that the server answers `status` with `body` rejects with a BackendError of the answer's status, error and field. */
async function expectRefusal(status: number, body: { error: string; field?: string }, call: (api: HttpBackend) => Promise<unknown>): Promise<void> {
  const { api } = webBackend(() => json(status, body));
  const err = await call(api).catch((e) => e);
  expect(err).toBeInstanceOf(BackendError);
  expect(err).toMatchObject({ status, message: body.error, field: body.field });
}

// ---- requests and tokens --------------------------------------------------------------------

describe('HttpBackend requests', () => {
  it('sends the bearer token and parses the answer', async () => {
    const { api, calls } = webBackend(() => json(200, list));
    await expect(api.listWorkspaces()).resolves.toEqual(list);
    expect(calls).toEqual([
      { method: 'POST', url: '/api/rpc/ListWorkspaces', auth: 'Bearer access-1', contentType: 'application/json', body: '{}' },
    ]);
  });

  it('retries only once: a second 401 signs out', async () => {
    const { api, calls } = webBackend((c) => (c.url === '/api/refresh' ? json(200, tokens(2)) : json(401, { error: 'no access' })));
    const err = await api.version().catch((e) => e);
    expect(err.authRequired).toBe(true);
    expect(err.message).toBe('no access');
    expect(calls.map((c) => c.url)).toEqual(['/api/rpc/Version', '/api/refresh', '/api/rpc/Version']);
    expect(api.auth.signedIn()).toBe(false);
  });


  it('on 401 refreshes once, retries with the new token, and keeps the new tokens', async () => {
    const storage = signedInStorage();
    const { api, calls } = webBackend((c) => {
      if (c.url === '/api/refresh') return json(200, tokens(2));
      return c.auth === 'Bearer access-2' ? json(200, list) : json(401, { error: 'token expired' });
    }, { storage });
    await expect(api.listWorkspaces()).resolves.toEqual(list);
    expect(calls.map((c) => `${c.url} ${c.auth ?? c.body}`)).toEqual([
      '/api/rpc/ListWorkspaces Bearer access-1',
      '/api/refresh {"refreshToken":"refresh-1"}',
      '/api/rpc/ListWorkspaces Bearer access-2',
    ]);
    expect(JSON.parse(storage.getItem('clusterspace.tokens')!).accessToken).toBe('access-2');
    expect(api.auth.signedIn()).toBe(true);
  });

  it('signs out when the refresh is refused, without retrying', async () => {
    const storage = signedInStorage();
    const { api, calls } = webBackend(
      (c) => (c.url === '/api/refresh' ? json(401, { error: 'refresh token expired' }) : json(401, { error: 'token expired' })),
      { storage },
    );
    const seen: boolean[] = [];
    api.auth.onChange((s) => seen.push(s));

    const err = await api.listWorkspaces().catch((e) => e);
    expect(err).toBeInstanceOf(BackendError);
    expect(err.authRequired).toBe(true);
    expect(calls).toHaveLength(2);
    expect(api.auth.signedIn()).toBe(false);
    expect(seen).toEqual([false]);
    expect(storage.getItem('clusterspace.tokens')).toBeNull();
  });

  it('shares one refresh between requests that hit 401 together', async () => {
    let releaseRefresh!: () => void;
    const refreshGate = new Promise<void>((r) => (releaseRefresh = r));
    const { api, calls } = webBackend(async (c) => {
      if (c.url === '/api/refresh') {
        await refreshGate;
        return json(200, tokens(2));
      }
      return c.auth === 'Bearer access-2' ? json(200, { version: '1.0' }) : json(401, { error: 'expired' });
    });
    const both = Promise.all([api.version(), api.version()]);
    await vi.waitFor(() => expect(calls.filter((c) => c.url === '/api/refresh')).toHaveLength(1));
    releaseRefresh();
    await expect(both).resolves.toEqual(['1.0', '1.0']);
    expect(calls.filter((c) => c.url === '/api/refresh')).toHaveLength(1);
  });

  it('does not sign out when the refresh fails for network reasons', async () => {
    const { api } = webBackend((c) => {
      if (c.url === '/api/refresh') throw new TypeError('Failed to fetch');
      return json(401, { error: 'expired' });
    });
    await expect(api.version()).rejects.toThrow('Failed to fetch');
    expect(api.auth.signedIn()).toBe(true);
  });

  it('explains a failure that carries no JSON error', async () => {
    const { api } = webBackend(() => new Response('upstream down', { status: 502, statusText: 'Bad Gateway' }));
    await expect(api.listWorkspaces()).rejects.toThrow('The server answered 502 Bad Gateway: upstream down');
  });

  it('fails as signed out without calling the server when it holds no tokens', async () => {
    const { api, calls } = webBackend(() => json(200, list), { storage: memoryStorage() });
    const err = await api.listWorkspaces().catch((e) => e);
    expect(err.authRequired).toBe(true);
    expect(calls).toHaveLength(0);
  });

  it("sends an import as the file's exact text in the ImportWorkspace call, alike on both doors", async () => {
    const text = '{"version":1,  "name":"kept exactly"}';
    for (const { door, api, sent } of bothDoors({ ImportWorkspace: { id: 'w9' } })) {
      await expect(api.importWorkspace(text), door).resolves.toEqual({ id: 'w9' });
      expect(sent(), door).toEqual([['ImportWorkspace', { text }]]);
    }
  });

  it('saves an export under the name from Content-Disposition, else one built from the workspace name', async () => {
    const saved: Array<{ name: string; text: string }> = [];
    const saveFile = (blob: Blob, name: string) => void blob.text().then((text) => saved.push({ name, text }));
    const exported = '{"name":"Dev box","rows":1}';
    let header: Record<string, string> = { 'Content-Disposition': 'attachment; filename="dev-box.clusterspace.json"' };
    const { api, calls } = webBackend(() => new Response(exported, { status: 200, headers: header }), { saveFile });

    await api.exportWorkspace('w1');
    header = {};
    await api.exportWorkspace('w1');
    await vi.waitFor(() => expect(saved).toHaveLength(2));
    expect(saved).toEqual([
      { name: 'dev-box.clusterspace.json', text: exported },
      { name: 'Dev box.clusterspace.json', text: exported },
    ]);
    expect(calls[0]).toMatchObject({ url: '/api/workspaces/w1/export', auth: 'Bearer access-1' });
  });
});

describe('HttpBackend providers', () => {
  const input = localProviderInput();

  it('hands the field of a 400 to the caller', async () => {
    await expectRefusal(400, { error: 'name: must not be empty', field: 'name' }, (api) => api.saveProvider('', { ...input, name: '' }));
  });

  it('names the host field when discovery refuses it', async () => {
    await expectRefusal(400, { error: 'host: "http://x" is not a host name', field: 'host' }, (api) => api.discoverProviders('http://x'));
  });
});

describe('HttpBackend login', () => {
  it('stores the tokens, so a reload stays signed in', async () => {
    const storage = memoryStorage();
    const { api, calls, fetch } = webBackend(() => json(200, tokens(1)), { storage });
    const seen: boolean[] = [];
    api.auth.onChange((s) => seen.push(s));
    expect(api.auth.signedIn()).toBe(false);

    await api.auth.login('pw');
    expect(calls[0]).toMatchObject({ method: 'POST', url: '/api/login', body: '{"password":"pw"}', auth: null });
    expect(api.auth.signedIn()).toBe(true);
    expect(seen).toEqual([true]);
    expect(new HttpBackend({ fetch, storage }).auth.signedIn()).toBe(true);
  });

  it('rejects a wrong password with the server message', async () => {
    const { api } = webBackend(() => json(401, { error: 'wrong password' }), { storage: memoryStorage() });
    await expect(api.auth.login('nope')).rejects.toThrow('wrong password');
    expect(api.auth.signedIn()).toBe(false);
  });

  it('passes on how long a lockout lasts', async () => {
    const { api } = webBackend(() => json(429, { error: 'too many attempts: locked for 30s', retryAfter: 30 }), { storage: memoryStorage() });
    const err = await api.auth.login('x').catch((e) => e);
    expect(err.message).toBe('too many attempts: locked for 30s');
    expect(err.retryAfter).toBe(30);
    expect(err.status).toBe(429);
  });

  it('sends the unlock code only when one is given', async () => {
    const { api, calls } = webBackend(() => json(200, tokens(1)), { storage: memoryStorage() });
    await api.auth.login('pw', 'ABCD-EFGH-JKMN');
    expect(calls[0].body).toBe('{"password":"pw","unlock":"ABCD-EFGH-JKMN"}');
    await api.auth.login('pw', '');
    expect(calls[1].body).toBe('{"password":"pw"}');
  });

  it('forgets the tokens on logout and ends the session on the server', () => {
    const storage = signedInStorage();
    const { api, calls } = webBackend(() => new Response(null, { status: 204 }), { storage });
    api.auth.logout();
    expect(api.auth.signedIn()).toBe(false);
    expect(storage.getItem('clusterspace.tokens')).toBeNull();
    expect(calls).toEqual([
      expect.objectContaining({ method: 'POST', url: '/api/logout', auth: 'Bearer access-1' }),
    ]);
  });

  it('signs out even when the server cannot be reached', async () => {
    const { api } = webBackend(() => Promise.reject(new TypeError('Failed to fetch')));
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

  it("passes on a 404's advice verbatim", async () => {
    const { api } = webBackend(() => json(404, { error: 'pane "p9" has no terminal: restart the pane' }));
    await expect(api.terminalRestart('p9', 'tab-1')).rejects.toThrow('pane "p9" has no terminal: restart the pane');
  });
});

describe('HttpBackend SSH servers', () => {
  const input = { name: 'build box', host: '10.0.0.5', port: 2222, user: 'ci', keyPath: '' };

  it('names the field of a bad input', async () => {
    await expectRefusal(400, { error: 'host: "a b" is not a host name or address', field: 'host' }, (api) => api.saveSSHServer('', { ...input, host: 'a b' }));
  });

  it("rejects with ssh's own words when the server cannot be reached", async () => {
    await expectRefusal(502, { error: 'ssh: connect to host 10.0.0.5 port 2222: Connection refused' }, (api) => api.remoteSessions('ssh-1'));
  });
});

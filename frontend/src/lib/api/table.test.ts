// The table's calls as both transports send them, checked against the answers Go really gives:
// testdata/*.json is written by backend/api's TestGoldenAnswers from a real engine, not by hand.
import { describe, expect, it, vi } from 'vitest';
import { BackendError } from './errors';
import { HttpBackend } from './http';
import { WailsBackend, type WailsApp } from './wails';
import { CALL_NAMES, type CallName } from './table';
import listWorkspaces from './testdata/ListWorkspaces.json';
import listProviders from './testdata/ListProviders.json';
import prices from './testdata/Prices.json';
import launchTemplates from './testdata/LaunchTemplates.json';
import terminalOpen from './testdata/TerminalOpen.json';
import listSSHServers from './testdata/ListSSHServers.json';

const golden: Partial<Record<CallName, unknown>> = {
  ListWorkspaces: listWorkspaces,
  ListProviders: listProviders,
  Prices: prices,
  LaunchTemplates: launchTemplates,
  TerminalOpen: terminalOpen,
  ListSSHServers: listSSHServers,
};

/** A desktop backend whose one binding answers from the golden files and records the calls. */
function desktop(fail?: string) {
  const Call = vi.fn(async (name: string, _args: unknown) => {
    if (fail) throw fail;
    return golden[name as CallName] ?? null;
  });
  return { api: new WailsBackend({ Call } as unknown as WailsApp, undefined), Call };
}

/** A web backend whose server answers from the golden files and records the requests. */
function web(status = 200, errorBody?: unknown) {
  const requests: { url: string; body: unknown }[] = [];
  const fetch = vi.fn(async (url: RequestInfo | URL, init?: RequestInit) => {
    const u = String(url);
    requests.push({ url: u, body: init?.body ? JSON.parse(String(init.body)) : undefined });
    if (status !== 200) return new Response(JSON.stringify(errorBody), { status, headers: { 'Content-Type': 'application/json' } });
    const name = u.replace('/api/rpc/', '') as CallName;
    const body = golden[name];
    return body === undefined ? new Response(null, { status: 204 }) : new Response(JSON.stringify(body), { status: 200, headers: { 'Content-Type': 'application/json' } });
  });
  const storage = new Map<string, string>([['clusterspace.tokens', JSON.stringify({ accessToken: 'a', refreshToken: 'r', expiresAt: Date.now() + 60_000 })]]);
  const api = new HttpBackend({
    fetch: fetch as unknown as typeof globalThis.fetch,
    storage: { getItem: (k) => storage.get(k) ?? null, setItem: (k, v) => void storage.set(k, v), removeItem: (k) => void storage.delete(k) },
    openSocket: () => ({ close() {}, send() {} }) as never,
  });
  return { api, requests };
}

describe('the call table on both transports', () => {
  it('sends each call as its name and one JSON object of arguments, alike on both doors', async () => {
    const d = desktop();
    const w = web();
    for (const api of [d.api, w.api]) {
      await api.setGrid('ws-1', 2, 3, true);
      await api.updatePane('ws-1', 'pane-1', { label: 'logs' });
      await api.saveProvider('', { name: 'L', kind: 'openai', baseUrl: '', model: 'm', visionModel: '', temperature: null, maxTokens: 0, thinking: false, contextWindow: 0 });
      await api.killRemoteSession('ssh-1', 'main');
    }
    const sent = [
      ['SetGrid', { id: 'ws-1', rows: 2, cols: 3, force: true }],
      ['UpdatePane', { id: 'ws-1', paneId: 'pane-1', label: 'logs' }],
      ['SaveProvider', { id: '', input: { name: 'L', kind: 'openai', baseUrl: '', model: 'm', visionModel: '', temperature: null, maxTokens: 0, thinking: false, contextWindow: 0 } }],
      ['KillRemoteSession', { id: 'ssh-1', name: 'main' }],
    ];
    expect(d.Call.mock.calls).toEqual(sent);
    expect(w.requests.map((r) => [r.url, r.body])).toEqual(sent.map(([n, a]) => [`/api/rpc/${n}`, a]));
  });

  it("reads Go's real answers into the UI's types", async () => {
    for (const { api } of [desktop(), web()]) {
      const list = await api.listWorkspaces();
      expect(list.workspaces[0].panes).toHaveLength(4);
      expect(list.workspaces[0].panes[0].kind).toBe('terminal');
      const tabs = await api.terminalOpen('pane-0', 80, 24);
      expect(tabs[0]).toMatchObject({ paneId: 'pane-0', tabId: 'tab-1', running: true, exitCode: null, remote: '' });
      expect((await api.listProviders()).providers[0]).toMatchObject({ name: 'Local', apiKeySet: false });
      expect(await api.prices()).toEqual(prices.prices);
      expect(await api.listSSHServers()).toEqual([]);
      const templates = await api.launchTemplates();
      expect(templates.map((t) => t.id)).toContain('claude');
    }
  });

  it('turns a refusal into a BackendError with its field and busy panes, alike on both doors', async () => {
    const body = { error: 'would end work in progress', field: 'force', busy: [{ paneId: 'pane-1', label: 'T', busy: ['sleep'] }] };
    const fromDesktop = await desktop(JSON.stringify(body)).api.setGrid('w', 1, 1).catch((e) => e);
    const fromWeb = await web(409, body).api.setGrid('w', 1, 1).catch((e) => e);
    for (const err of [fromDesktop, fromWeb]) {
      expect(err).toBeInstanceOf(BackendError);
      expect(err.message).toBe(body.error);
      expect(err.field).toBe('force');
      expect(err.busy).toEqual(body.busy);
    }
    const plain = await desktop('the window went away').api.listWorkspaces().catch((e) => e);
    expect(plain.message).toBe('the window went away');
  });

  it('names every call the Go table declares', () => {
    expect(CALL_NAMES).toContain('ListWorkspaces');
    expect(new Set(CALL_NAMES).size).toBe(CALL_NAMES.length);
  });
});

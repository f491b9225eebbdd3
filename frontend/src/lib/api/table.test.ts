// The table's calls as both transports send them, checked against the answers Go really gives:
// testdata/*.json is written by backend/api's TestGoldenAnswers from a real engine, not by hand.
import { describe, expect, it } from 'vitest';
import { BackendError } from './errors';
import { desktop as desktopOn, web as webOn, type Golden } from './golden.fakes';
import { CALL_NAMES } from './table';
import listWorkspaces from './testdata/ListWorkspaces.json';
import listProviders from './testdata/ListProviders.json';
import prices from './testdata/Prices.json';
import launchTemplates from './testdata/LaunchTemplates.json';
import terminalOpen from './testdata/TerminalOpen.json';
import listSSHServers from './testdata/ListSSHServers.json';

const golden: Golden = {
  ListWorkspaces: listWorkspaces,
  ListProviders: listProviders,
  Prices: prices,
  LaunchTemplates: launchTemplates,
  TerminalOpen: terminalOpen,
  ListSSHServers: listSSHServers,
};

const desktop = () => desktopOn(golden);
const web = () => webOn(golden);

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
    const fromDesktop = await desktopOn(golden, { status: 409, body }).api.setGrid('w', 1, 1).catch((e) => e);
    const fromWeb = await webOn(golden, { status: 409, body }).api.setGrid('w', 1, 1).catch((e) => e);
    for (const err of [fromDesktop, fromWeb]) {
      expect(err).toBeInstanceOf(BackendError);
      expect(err.message).toBe(body.error);
      expect(err.field).toBe('force');
      expect(err.busy).toEqual(body.busy);
    }
    const gone = desktop();
    gone.Call.mockRejectedValueOnce('the window went away');
    const plain = await gone.api.listWorkspaces().catch((e) => e);
    expect(plain.message).toBe('the window went away');
  });

  it('names every call the Go table declares', () => {
    expect(CALL_NAMES).toContain('ListWorkspaces');
    expect(new Set(CALL_NAMES).size).toBe(CALL_NAMES.length);
  });
});

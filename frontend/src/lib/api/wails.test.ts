import { describe, expect, it, vi } from 'vitest';
import { BackendError, fieldFromMessage } from './errors';
import type { ProviderInput } from './types';
import { WAILS_EVENT, WailsBackend, type WailsApp, type WailsRuntime } from './wails';

function fakeApp(over: Partial<WailsApp> = {}): WailsApp {
  const unused = () => Promise.reject('not used in this test');
  return {
    Version: unused,
    ListWorkspaces: unused,
    CreateWorkspace: unused,
    RenameWorkspace: unused,
    DeleteWorkspace: unused,
    ActivateWorkspace: unused,
    SetGrid: unused,
    SetWeights: unused,
    SwapPanes: unused,
    UpdatePane: unused,
    ExportWorkspace: unused,
    ImportWorkspace: unused,
    ListProviders: unused,
    SaveProvider: unused,
    DeleteProvider: unused,
    SetDefaultProviders: unused,
    TestProvider: unused,
    TestUnsavedProvider: unused,
    DiscoverProviders: unused,
    Prices: unused,
    SetPrices: unused,
    ...over,
  } as WailsApp;
}

describe('WailsBackend', () => {
  it("turns Wails' plain-string rejections into Errors with the same message", async () => {
    const api = new WailsBackend(fakeApp({ SetGrid: () => Promise.reject('cols: must be between 1 and 6, got 0') }), undefined);
    const err = await api.setGrid('w1', 1, 0).catch((e) => e);
    expect(err).toBeInstanceOf(BackendError);
    expect(err.message).toBe('cols: must be between 1 and 6, got 0');
  });

  it('passes empty strings for the parts of a pane patch that stay unchanged', async () => {
    const UpdatePane = vi.fn(async () => ({}) as never);
    const api = new WailsBackend(fakeApp({ UpdatePane }), undefined);
    await api.updatePane('w1', 'p1', { label: 'logs' });
    await api.updatePane('w1', 'p1', { kind: 'browser' });
    expect(UpdatePane.mock.calls).toEqual([
      ['w1', 'p1', '', 'logs'],
      ['w1', 'p1', 'browser', ''],
    ]);
  });

  it('treats a cancelled save dialog as done, not as an error', async () => {
    const api = new WailsBackend(fakeApp({ ExportWorkspace: async () => '' }), undefined);
    await expect(api.exportWorkspace('w1')).resolves.toBeUndefined();
  });

  it('subscribes to the backend event and hands back the unsubscribe', () => {
    const off = vi.fn();
    let registered: ((...data: any[]) => void) | undefined;
    const runtime: WailsRuntime = {
      EventsOn: vi.fn((name: string, cb: (...data: any[]) => void) => {
        expect(name).toBe(WAILS_EVENT);
        registered = cb;
        return off;
      }),
    };
    const api = new WailsBackend(fakeApp(), runtime);
    const seen: unknown[] = [];
    const unsubscribe = api.subscribe((e) => seen.push(e));
    registered?.({ topic: 'workspaces', type: 'activated', data: { workspaces: [], activeId: '' } });
    expect(seen).toEqual([{ topic: 'workspaces', type: 'activated', data: { workspaces: [], activeId: '' } }]);
    unsubscribe();
    expect(off).toHaveBeenCalled();
  });
});

describe('WailsBackend providers', () => {
  const input: ProviderInput = {
    name: 'Claude',
    kind: 'anthropic',
    baseUrl: '',
    model: 'claude-sonnet-4-5',
    visionModel: '',
    temperature: 0.2,
    maxTokens: 4096,
    thinking: true,
    contextWindow: 200000,
  };

  it("passes '' to create, and leaves apiKey out unless it is set (Go's nil keeps the key)", async () => {
    const SaveProvider = vi.fn(async () => ({}) as never);
    const api = new WailsBackend(fakeApp({ SaveProvider }), undefined);
    await api.saveProvider('', input);
    await api.saveProvider('p1', { ...input, apiKey: undefined });
    await api.saveProvider('p1', { ...input, apiKey: '' });
    await api.saveProvider('p1', { ...input, apiKey: 'sk-ant-new' });
    const calls = SaveProvider.mock.calls as unknown as Array<[string, ProviderInput]>;
    expect(calls.map(([id]) => id)).toEqual(['', 'p1', 'p1', 'p1']);
    expect(calls[0][1]).toEqual(input);
    expect('apiKey' in calls[0][1]).toBe(false);
    expect('apiKey' in calls[1][1]).toBe(false);
    expect(calls[2][1].apiKey).toBe('');
    expect(calls[3][1].apiKey).toBe('sk-ant-new');
  });

  it('reads the field a Go error names, so it reaches the form', async () => {
    const api = new WailsBackend(
      fakeApp({
        SaveProvider: () => Promise.reject('model: must not be empty: name the model to use'),
        SetDefaultProviders: () => Promise.reject('criticDefaultId: no provider has id "x"'),
        DiscoverProviders: () => Promise.reject('host: "a/b" is not a host name or IP address'),
      }),
      undefined,
    );
    const err = await api.saveProvider('', { ...input, model: '' }).catch((e) => e);
    expect(err).toBeInstanceOf(BackendError);
    expect(err.message).toBe('model: must not be empty: name the model to use');
    expect(err.field).toBe('model');
    expect((await api.setDefaultProviders('', 'x').catch((e) => e)).field).toBe('criticDefaultId');
    expect((await api.discoverProviders('a/b').catch((e) => e)).field).toBe('host');
  });

  it('turns Go nil slices and maps into empty ones', async () => {
    const api = new WailsBackend(fakeApp({ DiscoverProviders: async () => null, Prices: async () => null }), undefined);
    await expect(api.discoverProviders('')).resolves.toEqual([]);
    await expect(api.prices()).resolves.toEqual({});
  });

  it('calls the bound methods with the arguments in order', async () => {
    const app = fakeApp({
      DeleteProvider: vi.fn(async () => {}),
      SetDefaultProviders: vi.fn(async () => ({}) as never),
      TestProvider: vi.fn(async () => ({ ok: true, message: '', latencyMs: 12 })),
      DiscoverProviders: vi.fn(async () => []),
      SetPrices: vi.fn(async () => {}),
    });
    const api = new WailsBackend(app, undefined);
    await api.deleteProvider('p1');
    await api.setDefaultProviders('p1', 'p2');
    await expect(api.testProvider('p1')).resolves.toEqual({ ok: true, message: '', latencyMs: 12 });
    await api.discoverProviders('gpu-box');
    await api.setPrices({ m: { inputPerMTok: 1, outputPerMTok: 2 } });
    expect(app.DeleteProvider).toHaveBeenCalledWith('p1');
    expect(app.SetDefaultProviders).toHaveBeenCalledWith('p1', 'p2');
    expect(app.DiscoverProviders).toHaveBeenCalledWith('gpu-box');
    expect(app.SetPrices).toHaveBeenCalledWith({ m: { inputPerMTok: 1, outputPerMTok: 2 } });
  });
});

describe('fieldFromMessage', () => {
  it('takes a known field from the "field: message" prefix and nothing else', () => {
    const fields = ['name', 'baseUrl'];
    expect(fieldFromMessage('baseUrl: "ftp://x" is not an http(s) URL', fields)).toBe('baseUrl');
    expect(fieldFromMessage('rows: must be between 1 and 6', fields)).toBeUndefined();
    expect(fieldFromMessage('provider "p1": not found', fields)).toBeUndefined();
    expect(fieldFromMessage('could not store the API key: name: x', fields)).toBeUndefined();
  });
});

describe('WailsBackend terminals', () => {
  const tab = { paneId: 'p1', tabId: 'tab-1', title: 'bash', running: true, cols: 80, rows: 24, confined: false, active: true };

  /** A promise the test settles by hand, to hold a bound call "in flight". */
  function deferred<T = void>() {
    let resolve!: (v: T) => void;
    let reject!: (e: unknown) => void;
    const promise = new Promise<T>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    return { promise, resolve, reject };
  }

  it('calls the bound methods with their arguments and fills in omitted tab fields', async () => {
    const app = fakeApp({
      TerminalOpen: vi.fn(async () => [tab]),
      TerminalNewTab: vi.fn(async () => ({ ...tab, tabId: 'tab-2' })),
      TerminalTabs: vi.fn(async () => null),
      TerminalRestart: vi.fn(async () => {}),
      TerminalCloseTab: vi.fn(async () => {}),
      TerminalActivate: vi.fn(async () => {}),
      TerminalSetBroadcast: vi.fn(async () => {}),
    });
    const api = new WailsBackend(app, undefined);
    await expect(api.terminalOpen('p1', 120, 40)).resolves.toEqual([{ ...tab, exitCode: null, remote: '', pid: 0 }]);
    await expect(api.terminalNewTab('p1', 100, 30)).resolves.toMatchObject({ tabId: 'tab-2' });
    await expect(api.terminalTabs('p1')).resolves.toEqual([]);
    await api.terminalRestart('p1', 'tab-1');
    await api.terminalCloseTab('p1', 'tab-1');
    await api.terminalActivate('p1', 'tab-2');
    await api.terminalSetBroadcast('p1', true);
    expect(app.TerminalOpen).toHaveBeenCalledWith('p1', 120, 40);
    expect(app.TerminalNewTab).toHaveBeenCalledWith('p1', 100, 30);
    expect(app.TerminalRestart).toHaveBeenCalledWith('p1', 'tab-1');
    expect(app.TerminalCloseTab).toHaveBeenCalledWith('p1', 'tab-1');
    expect(app.TerminalActivate).toHaveBeenCalledWith('p1', 'tab-2');
    expect(app.TerminalSetBroadcast).toHaveBeenCalledWith('p1', true);
  });

  it('decodes the base64 replay of an attach', async () => {
    const api = new WailsBackend(fakeApp({ TerminalAttach: async () => btoa('$ ls\r\n\x1b[0m') }), undefined);
    await expect(api.terminalAttach('p1', 'tab-1')).resolves.toEqual(new TextEncoder().encode('$ ls\r\n\x1b[0m'));
  });

  it("turns a failed attach's Go error into a BackendError", async () => {
    const api = new WailsBackend(fakeApp({ TerminalAttach: () => Promise.reject('pane "p1" has no tab "x": reopen the pane') }), undefined);
    const err = await api.terminalAttach('p1', 'x').catch((e) => e);
    expect(err).toBeInstanceOf(BackendError);
    expect(err.message).toBe('pane "p1" has no tab "x": reopen the pane');
  });

  it('sends typing one call at a time, in order, joining keys typed while a call is in flight', async () => {
    const calls: string[] = [];
    const gates: Array<ReturnType<typeof deferred<void>>> = [];
    const api = new WailsBackend(
      fakeApp({
        TerminalInput: (_p: string, _t: string, data: string) => {
          calls.push(data);
          const g = deferred<void>();
          gates.push(g);
          return g.promise;
        },
      }),
      undefined,
    );
    api.terminalInput('p1', 'tab-1', 'l');
    await vi.waitFor(() => expect(calls).toEqual(['l']));
    api.terminalInput('p1', 'tab-1', 's');
    api.terminalInput('p1', 'tab-1', '\r');
    api.terminalInput('p2', 'tab-9', 'x'); // another tab is not held up
    await vi.waitFor(() => expect(calls).toEqual(['l', 'x']));
    gates[0].resolve();
    await vi.waitFor(() => expect(calls).toEqual(['l', 'x', 's\r']));
  });

  it('keeps typing after a failed call, and only warns', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const calls: string[] = [];
    const api = new WailsBackend(
      fakeApp({
        TerminalInput: async (_p: string, _t: string, data: string) => {
          calls.push(data);
          if (data === 'a') throw 'tab exited';
        },
      }),
      undefined,
    );
    api.terminalInput('p1', 'tab-1', 'a');
    await vi.waitFor(() => expect(warn).toHaveBeenCalled());
    api.terminalInput('p1', 'tab-1', 'b');
    await vi.waitFor(() => expect(calls).toEqual(['a', 'b']));
    warn.mockRestore();
  });

  it('orders attach after a detach of the same tab, and sends only the last of a burst of resizes', async () => {
    const order: string[] = [];
    const detachGate = deferred();
    const api = new WailsBackend(
      fakeApp({
        TerminalDetach: () => {
          order.push('detach');
          return detachGate.promise;
        },
        TerminalAttach: async () => {
          order.push('attach');
          return '';
        },
        TerminalResize: async (_p: string, _t: string, cols: number, rows: number) => {
          order.push(`resize ${cols}x${rows}`);
        },
      }),
      undefined,
    );
    void api.terminalDetach('p1', 'tab-1');
    const attached = api.terminalAttach('p1', 'tab-1');
    api.terminalResize('p1', 'tab-1', 100, 30);
    api.terminalResize('p1', 'tab-1', 110, 31);
    api.terminalResize('p1', 'tab-1', 120, 32);
    await Promise.resolve();
    expect(order).toEqual(['detach']);
    detachGate.resolve();
    await attached;
    await vi.waitFor(() => expect(order).toEqual(['detach', 'attach', 'resize 120x32']));
  });
});

describe('WailsBackend browser panes', () => {
  const tab = { paneId: 'p1', tabId: 'btab-1', url: 'about:blank', title: '', active: true };
  const page = { tabId: 'btab-1', url: 'https://example.com/', title: 'Example', loading: false };

  it('calls the bound methods with their arguments and fills in omitted fields', async () => {
    const app = fakeApp({
      BrowserOpen: vi.fn(async () => [tab]),
      BrowserTabs: vi.fn(async () => null),
      BrowserNewTab: vi.fn(async () => ({ ...tab, tabId: 'btab-2' })),
      BrowserCloseTab: vi.fn(async () => {}),
      BrowserActivate: vi.fn(async () => tab),
      BrowserNavigate: vi.fn(async () => page),
      BrowserBack: vi.fn(async () => page),
      BrowserForward: vi.fn(async () => page),
      BrowserReload: vi.fn(async () => ({ ...page, status: 200 })),
      BrowserViewport: vi.fn(async () => {}),
      BrowserReconnect: vi.fn(async () => tab),
      BrowserAnswerPrompt: vi.fn(async () => {}),
    });
    const api = new WailsBackend(app, undefined);
    await expect(api.browserOpen('p1', '', 800, 600)).resolves.toEqual([
      { ...tab, workspaceId: '', loading: false, crashed: false, discarded: false, canGoBack: false, canGoForward: false, prompt: null },
    ]);
    await expect(api.browserTabs('p1')).resolves.toEqual([]);
    await expect(api.browserNewTab('p1', 'example.com')).resolves.toMatchObject({ tabId: 'btab-2' });
    await api.browserCloseTab('p1', 'btab-2');
    await expect(api.browserActivate('p1', 'btab-1')).resolves.toMatchObject({ tabId: 'btab-1', active: true });
    await expect(api.browserNavigate('p1', 'example.com')).resolves.toEqual(page);
    await api.browserBack('p1');
    await api.browserForward('p1');
    await expect(api.browserReload('p1')).resolves.toEqual({ ...page, status: 200 });
    await api.browserViewport('p1', 1024, 700);
    await api.browserReconnect('p1');
    await api.browserAnswerPrompt('p1', { proceed: false });
    expect(app.BrowserAnswerPrompt).toHaveBeenCalledWith('p1', { proceed: false });
    expect(app.BrowserOpen).toHaveBeenCalledWith('p1', '', 800, 600);
    expect(app.BrowserNewTab).toHaveBeenCalledWith('p1', 'example.com');
    expect(app.BrowserCloseTab).toHaveBeenCalledWith('p1', 'btab-2');
    expect(app.BrowserActivate).toHaveBeenCalledWith('p1', 'btab-1');
    expect(app.BrowserNavigate).toHaveBeenCalledWith('p1', 'example.com');
    expect(app.BrowserBack).toHaveBeenCalledWith('p1');
    expect(app.BrowserForward).toHaveBeenCalledWith('p1');
    expect(app.BrowserViewport).toHaveBeenCalledWith('p1', 1024, 700);
    expect(app.BrowserReconnect).toHaveBeenCalledWith('p1');
  });

  /** A runtime whose 'backend' event the test fires by hand. */
  function fakeRuntime() {
    let registered: ((...data: any[]) => void) | undefined;
    const runtime: WailsRuntime = {
      EventsOn: (_name: string, cb: (...data: any[]) => void) => {
        registered = cb;
        return () => (registered = undefined);
      },
    };
    return { runtime, fire: (e: unknown) => registered?.(e) };
  }

  it('delivers frames from the backend event, and a failed watch or input as a browser error event', async () => {
    const { runtime, fire } = fakeRuntime();
    const api = new WailsBackend(
      fakeApp({
        BrowserWatch: () => Promise.reject('no browser pane "p9": the browser panes are p1'),
        BrowserInput: () => Promise.reject('unknown key "Foo"'),
      }),
      runtime,
    );
    const seen: unknown[] = [];
    const unsubscribe = api.subscribe((e) => seen.push(e));
    const frame = { topic: 'browser', type: 'frame', data: { paneId: 'p1', data: '/9j/', width: 1, height: 1 } };
    fire(frame);
    api.browserWatch('p9');
    api.browserInput('p1', { type: 'keydown', key: 'Foo' });
    await vi.waitFor(() => expect(seen).toHaveLength(3));
    expect(seen[0]).toEqual(frame);
    // Watch and input go in separate lanes: their failures may come in either order.
    expect(seen).toContainEqual({ topic: 'browser', type: 'error', data: { paneId: 'p9', error: 'no browser pane "p9": the browser panes are p1' } });
    expect(seen).toContainEqual({ topic: 'browser', type: 'error', data: { paneId: 'p1', error: 'unknown key "Foo"' } });
    unsubscribe();
    api.browserInput('p1', { type: 'keydown', key: 'Foo' });
    await new Promise((r) => setTimeout(r, 0));
    expect(seen).toHaveLength(3);
  });

  it('sends input one call at a time in order, keeping only the newest of waiting mouse moves', async () => {
    const sent: string[] = [];
    const gates: Array<() => void> = [];
    const api = new WailsBackend(
      fakeApp({
        BrowserInput: (_p: string, ev: { type: string; x?: number }) => {
          sent.push(ev.type === 'mousemove' ? `move ${ev.x}` : ev.type);
          return new Promise<void>((resolve) => gates.push(resolve));
        },
      }),
      undefined,
    );
    api.browserInput('p1', { type: 'mousemove', x: 1, y: 1 });
    await vi.waitFor(() => expect(sent).toEqual(['move 1']));
    api.browserInput('p1', { type: 'mousemove', x: 2, y: 1 });
    api.browserInput('p1', { type: 'mousemove', x: 3, y: 1 });
    api.browserInput('p1', { type: 'mousedown', x: 3, y: 1 });
    api.browserInput('p1', { type: 'mouseup', x: 3, y: 1 });
    api.browserInput('p1', { type: 'mousemove', x: 4, y: 1 });
    for (let i = 0; i < 4; i++) {
      gates[i]();
      await vi.waitFor(() => expect(sent).toHaveLength(i + 2));
    }
    expect(sent).toEqual(['move 1', 'move 3', 'mousedown', 'mouseup', 'move 4']);
  });

  it('orders watch and unwatch of a pane', async () => {
    const order: string[] = [];
    let releaseWatch: () => void = () => {};
    const api = new WailsBackend(
      fakeApp({
        BrowserWatch: () => {
          order.push('watch');
          return new Promise<void>((resolve) => (releaseWatch = resolve));
        },
        BrowserUnwatch: async () => {
          order.push('unwatch');
        },
      }),
      undefined,
    );
    api.browserWatch('p1');
    api.browserUnwatch('p1');
    await Promise.resolve();
    expect(order).toEqual(['watch']);
    releaseWatch();
    await vi.waitFor(() => expect(order).toEqual(['watch', 'unwatch']));
  });
});

describe('WailsBackend SSH servers', () => {
  const input = { name: 'build box', host: '10.0.0.5', port: 0, user: '', keyPath: '' };

  it("passes '' to create, and leaves password out unless it is set (Go's nil keeps it)", async () => {
    const SaveSSHServer = vi.fn(async () => ({ id: 'ssh-1', name: 'build box' }));
    const api = new WailsBackend(fakeApp({ SaveSSHServer }), undefined);
    await expect(api.saveSSHServer('', input)).resolves.toMatchObject({ id: 'ssh-1', passwordSet: false, port: 0 });
    await api.saveSSHServer('ssh-1', { ...input, password: undefined });
    await api.saveSSHServer('ssh-1', { ...input, password: '' });
    await api.saveSSHServer('ssh-1', { ...input, password: 'pw' });
    const calls = SaveSSHServer.mock.calls as unknown as Array<[string, Record<string, unknown>]>;
    expect(calls.map(([id]) => id)).toEqual(['', 'ssh-1', 'ssh-1', 'ssh-1']);
    expect('password' in calls[0][1]).toBe(false);
    expect('password' in calls[1][1]).toBe(false);
    expect(calls[2][1].password).toBe('');
    expect(calls[3][1].password).toBe('pw');
  });

  it('reads the field a Go error names', async () => {
    const api = new WailsBackend(fakeApp({ SaveSSHServer: () => Promise.reject('keyPath: "/nope" is not a readable key file') }), undefined);
    const err = await api.saveSSHServer('', input).catch((e) => e);
    expect(err.field).toBe('keyPath');
  });

  it('calls the other bound methods, turning nil slices into empty ones', async () => {
    const app = fakeApp({
      ListSSHServers: vi.fn(async () => null),
      DeleteSSHServer: vi.fn(async () => {}),
      TerminalOpenSSH: vi.fn(async () => ({ paneId: 'p1', tabId: 't2', running: true, remote: 'box' })),
      RemoteSessions: vi.fn(async () => null),
      KillRemoteSession: vi.fn(async () => {}),
    });
    const api = new WailsBackend(app, undefined);
    await expect(api.listSSHServers()).resolves.toEqual([]);
    await api.deleteSSHServer('ssh-1');
    await expect(api.terminalOpenSSH('p1', 'ssh-1', 120, 40)).resolves.toMatchObject({ tabId: 't2', remote: 'box', exitCode: null });
    await expect(api.remoteSessions('ssh-1')).resolves.toEqual([]);
    await api.killRemoteSession('ssh-1', 'misc');
    expect(app.DeleteSSHServer).toHaveBeenCalledWith('ssh-1');
    expect(app.TerminalOpenSSH).toHaveBeenCalledWith('p1', 'ssh-1', 120, 40);
    expect(app.RemoteSessions).toHaveBeenCalledWith('ssh-1');
    expect(app.KillRemoteSession).toHaveBeenCalledWith('ssh-1', 'misc');
  });
});

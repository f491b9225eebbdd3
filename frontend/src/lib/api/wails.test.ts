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

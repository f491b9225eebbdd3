import { describe, expect, it, vi } from 'vitest';
import type { Backend, BackendEvent, Provider, ProviderList } from '../api';
import { BackendError } from '../api';
import { savedProvider as provider } from '../api/providers.fixture';
import { liveBackend, warningsDuring } from './live.fixture';
import { ProviderStore } from './providers.svelte';

const at = (s: number) => `2025-01-01T00:00:${String(s).padStart(2, '0')}Z`;

function list(providers: Provider[], defaultId = '', criticDefaultId = ''): ProviderList {
  return { providers, defaultId, criticDefaultId, secretsBackend: 'keyring' };
}

const event = (data: ProviderList): BackendEvent => ({ topic: 'providers', type: 'updated', data });

function store(over: Partial<Backend> = {}) {
  const fake = liveBackend({ listProviders: vi.fn(async () => list([provider('p1')], 'p1', 'p1')), ...over });
  return { s: new ProviderStore(fake.backend), ...fake };
}

describe('ProviderStore events', () => {
  it('takes each pushed list as the whole truth: members, defaults and where keys are kept', () => {
    const { s, emit } = store();
    const stop = s.sync();
    emit(event(list([provider('p1'), provider('p2')], 'p1', 'p2')));
    expect(s.loaded).toBe(true);
    expect(s.providers.map((p) => p.id)).toEqual(['p1', 'p2']);
    expect([s.defaultId, s.criticDefaultId, s.secretsBackend]).toEqual(['p1', 'p2', 'keyring']);

    emit(event(list([provider('p2', { name: 'Renamed', updatedAt: at(5) })], 'p2', '')));
    expect(s.providers.map((p) => p.name)).toEqual(['Renamed']);
    expect([s.defaultId, s.criticDefaultId]).toEqual(['p2', '']);
    stop();
    emit(event(list([])));
    expect(s.providers).toHaveLength(1);
  });

  it('ignores other topics and malformed provider events', () => {
    const { s, emit } = store();
    s.sync();
    const warned = warningsDuring(() => {
      emit({ topic: 'workspaces', type: 'updated', data: list([provider('p1')]) });
      emit({ topic: 'providers', type: 'updated', data: { providers: 'nope' } });
    });
    expect(s.loaded).toBe(false);
    expect(warned).toBe(1);
  });

  it('does not let a late, older snapshot roll back a newer save', () => {
    const { s, emit } = store();
    s.sync();
    emit(event(list([provider('p1', { updatedAt: at(1) })])));
    s.applyProvider(provider('p1', { model: 'new', updatedAt: at(3) }));
    emit(event(list([provider('p1', { model: 'old', updatedAt: at(2) })])));
    expect(s.providers[0].model).toBe('new');
  });

  it('drops a fetched list when an event arrived while it was in flight', async () => {
    let answer!: (l: ProviderList) => void;
    const { s, emit } = store({ listProviders: () => new Promise((r) => (answer = r)) });
    s.sync();
    const loading = s.load();
    emit(event(list([provider('p1'), provider('p2')], 'p2')));
    answer(list([provider('p1')], 'p1'));
    await loading;
    expect(s.providers.map((p) => p.id)).toEqual(['p1', 'p2']);
    expect(s.defaultId).toBe('p2');
  });

  it('re-reads the list when the connection reopens, once it has been loaded', async () => {
    const { s, setConn, backend } = store();
    s.sync();
    setConn('connected');
    expect(backend.listProviders).not.toHaveBeenCalled();
    await s.load();
    setConn('connected');
    await vi.waitFor(() => expect(backend.listProviders).toHaveBeenCalledTimes(2));
  });

  it('keeps a failed load for the panel to show, and clears it after a success', async () => {
    let fail = true;
    const { s } = store({
      listProviders: vi.fn(async () => {
        if (fail) throw new BackendError('Could not reach the ClusterSpace server');
        return list([]);
      }),
    });
    await s.load();
    expect(s.loadError).toBe('Could not reach the ClusterSpace server');
    expect(s.loaded).toBe(false);
    fail = false;
    await s.load();
    expect(s.loadError).toBe('');
    expect(s.loaded).toBe(true);
  });
});

describe('ProviderStore actions', () => {
  it('adds a created provider and re-reads the defaults the backend chose for it', async () => {
    const created = provider('p1');
    const { s, backend } = store({
      saveProvider: vi.fn(async () => created),
      listProviders: vi.fn(async () => list([created], 'p1', 'p1')),
    });
    s.applyList(list([]));
    await expect(s.save('', { ...created, apiKey: 'sk-secret-1234' })).resolves.toEqual(created);
    expect(backend.saveProvider).toHaveBeenCalledWith('', expect.objectContaining({ apiKey: 'sk-secret-1234' }));
    expect(s.providers.map((p) => p.id)).toEqual(['p1']);
    expect([s.defaultId, s.criticDefaultId]).toEqual(['p1', 'p1']);
    // The key went to the backend and nowhere else.
    expect(JSON.stringify({ ...s.providers, tests: s.tests })).not.toContain('sk-secret-1234');
  });

  it('rejects with the field error, leaving the list alone', async () => {
    const { s } = store({
      saveProvider: vi.fn(async () => {
        throw new BackendError('name: must not be empty', { field: 'name' });
      }),
    });
    s.applyList(list([provider('p1')]));
    const err = await s.save('p1', { ...provider('p1'), name: '' }).catch((e) => e);
    expect(err.field).toBe('name');
    expect(s.providers[0].name).toBe('Provider p1');
  });

  it('removes a deleted provider and its test, and reads which defaults remain', async () => {
    const { s, backend } = store({
      deleteProvider: vi.fn(async () => {}),
      testProvider: vi.fn(async () => ({ ok: true, message: '', latencyMs: 5 })),
      listProviders: vi.fn(async () => list([provider('p2')], '', '')),
    });
    s.applyList(list([provider('p1'), provider('p2')], 'p1', 'p1'));
    await s.test('p1');
    expect(s.tests.p1?.result?.ok).toBe(true);
    await s.remove('p1');
    expect(backend.deleteProvider).toHaveBeenCalledWith('p1');
    expect(s.providers.map((p) => p.id)).toEqual(['p2']);
    expect(s.tests.p1).toBeUndefined();
    expect(s.defaultId).toBe('');
  });

  it('applies the list that setting defaults returns', async () => {
    const { s, backend } = store({
      setDefaultProviders: vi.fn(async () => list([provider('p1'), provider('p2')], 'p2', 'p1')),
    });
    s.applyList(list([provider('p1'), provider('p2')], 'p1', 'p1'));
    await s.setDefaults('p2', 'p1');
    expect(backend.setDefaultProviders).toHaveBeenCalledWith('p2', 'p1');
    expect([s.defaultId, s.criticDefaultId]).toEqual(['p2', 'p1']);
  });

  it('shows a test as running, then its result; a failed call is a failed test', async () => {
    let answer!: (r: { ok: boolean; message: string; latencyMs: number; models?: string[] }) => void;
    let calls = 0;
    const { s } = store({
      testProvider: vi.fn(() => {
        calls++;
        if (calls === 1) return new Promise((r) => (answer = r));
        return Promise.reject(new BackendError('provider "p1": not found', { status: 404 }));
      }) as Backend['testProvider'],
    });
    s.applyList(list([provider('p1')]));
    const running = s.test('p1');
    expect(s.tests.p1).toEqual({ running: true });
    answer({ ok: true, message: '', latencyMs: 42, models: ['a', 'b'] });
    await running;
    expect(s.tests.p1).toEqual({ running: false, result: { ok: true, message: '', latencyMs: 42, models: ['a', 'b'] } });

    await s.test('p1');
    expect(s.tests.p1.result).toEqual({ ok: false, message: 'provider "p1": not found', latencyMs: 0 });
  });

  it('forgets an earlier test result once the provider is edited', async () => {
    const { s } = store({
      testProvider: vi.fn(async () => ({ ok: false, message: 'authentication failed', latencyMs: 3 })),
      saveProvider: vi.fn(async () => provider('p1', { updatedAt: at(9) })),
    });
    s.applyList(list([provider('p1')]));
    await s.test('p1');
    expect(s.tests.p1).toBeDefined();
    await s.save('p1', { ...provider('p1'), apiKey: 'sk-fixed' });
    expect(s.tests.p1).toBeUndefined();
  });
});

import { describe, expect, it, vi } from 'vitest';
import type { Backend, SSHServer } from '../api';
import { liveBackend } from './live.fixture';
import { SSHStore } from './ssh.svelte';

function server(id: string, over: Partial<SSHServer> = {}): SSHServer {
  return { id, name: id, host: 'h', port: 0, user: '', keyPath: '', passwordSet: false, createdAt: '', updatedAt: '2025-01-01T00:00:00Z', ...over };
}

function fakeBackend(over: Partial<Backend> = {}) {
  return liveBackend({
    listSSHServers: vi.fn(async () => [server('a')]),
    saveSSHServer: vi.fn(async (id: string) => server(id || 'new', { updatedAt: '2025-01-02T00:00:00Z' })),
    deleteSSHServer: vi.fn(async () => {}),
    remoteSessions: vi.fn(async () => []),
    killRemoteSession: vi.fn(async () => {}),
    ...over,
  });
}

describe('SSHStore', () => {
  it('loads once for concurrent callers and follows update events', async () => {
    const { backend, emit } = fakeBackend();
    const store = new SSHStore(backend);
    store.sync();
    await Promise.all([store.load(), store.load()]);
    expect(backend.listSSHServers).toHaveBeenCalledTimes(1);
    expect(store.servers.map((s) => s.id)).toEqual(['a']);
    emit({ topic: 'ssh', type: 'updated', data: [server('a'), server('b', { passwordSet: true })] });
    expect(store.servers.map((s) => [s.id, s.passwordSet])).toEqual([
      ['a', false],
      ['b', true],
    ]);
  });

  it('adds, edits and removes, never rolling a server back to an older version', async () => {
    const { backend, emit } = fakeBackend();
    const store = new SSHStore(backend);
    store.sync();
    await store.load();
    await store.save('', { name: 'n', host: 'h', port: 0, user: '', keyPath: '', password: 'pw' });
    expect(store.servers.map((s) => s.id)).toEqual(['a', 'new']);
    await store.save('a', { name: 'a', host: 'h2', port: 0, user: '', keyPath: '' });
    // An older snapshot arriving late keeps the newer edit.
    emit({ topic: 'ssh', type: 'updated', data: [server('a', { host: 'old' }), server('new')] });
    expect(store.byId('a')?.updatedAt).toBe('2025-01-02T00:00:00Z');
    await store.remove('a');
    expect(backend.deleteSSHServer).toHaveBeenCalledWith('a');
    expect(store.servers.map((s) => s.id)).toEqual(['new']);
  });

  it('records a failed load and re-reads after a reconnect', async () => {
    const { backend, setConn } = fakeBackend({ listSSHServers: vi.fn(async () => Promise.reject(new Error('down'))) });
    const store = new SSHStore(backend);
    store.sync();
    await store.load();
    expect(store.loadError).toBe('down');
    expect(store.loaded).toBe(false);
    (backend.listSSHServers as ReturnType<typeof vi.fn>).mockResolvedValue([server('z')]);
    await store.load();
    setConn('connected');
    await vi.waitFor(() => expect(backend.listSSHServers).toHaveBeenCalledTimes(3));
    expect(store.loadError).toBe('');
  });
});

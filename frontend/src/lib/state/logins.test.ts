import { describe, expect, it, vi } from 'vitest';
import type { Backend, LoginsApi, SavedLogin } from '../api';
import { HttpLogins } from '../api';
import { LoginStore, loginInput } from './logins.svelte';

const login = (id: string, origin: string): SavedLogin => ({
  id,
  origin,
  username: 'ada',
  passwordSet: true,
  createdAt: '2026-01-01T00:00:00Z',
  updatedAt: '2026-01-01T00:00:00Z',
});

function store(api: Partial<LoginsApi>) {
  return new LoginStore({ logins: { revealNeedsPassword: false, ...api } } as unknown as Backend);
}

describe('LoginStore', () => {
  it('lists by origin and keeps its list after save and delete, never holding a password', async () => {
    const save = vi.fn(async () => login('l3', 'https://b.example'));
    const s = store({
      list: async () => [login('l2', 'https://c.example'), login('l1', 'https://a.example')],
      save,
      remove: async () => {},
    });
    await s.load();
    expect(s.loaded).toBe(true);
    expect(s.logins.map((l) => l.id)).toEqual(['l1', 'l2']);
    await s.save('', loginInput(' https://b.example ', ' ada ', 'hunter2'));
    expect(save).toHaveBeenCalledWith('', { origin: 'https://b.example', username: 'ada', password: 'hunter2' });
    expect(s.logins.map((l) => l.id)).toEqual(['l1', 'l3', 'l2']);
    expect(JSON.stringify(s.logins)).not.toContain('hunter2');
    await s.remove('l1');
    expect(s.logins.map((l) => l.id)).toEqual(['l3', 'l2']);
  });

  it('an edit with an empty password field keeps the saved password', () => {
    expect(loginInput('https://a.example', 'ada', '')).toEqual({ origin: 'https://a.example', username: 'ada' });
  });

  it('shows why the list could not be loaded', async () => {
    const s = store({ list: async () => Promise.reject(new Error('vault locked')) });
    await s.load();
    expect(s.loaded).toBe(false);
    expect(s.loadError).toBe('vault locked');
  });
});

describe('HttpLogins', () => {
  it('lists without passwords and reveals through its own call carrying the server password', async () => {
    const json = vi.fn(async (_method: string, path: string) => {
      if (path === '/api/logins') return { logins: [login('l1', 'https://a.example')] };
      return { password: 'hunter2' };
    });
    const api = new HttpLogins(json as never);
    expect(api.revealNeedsPassword).toBe(true);
    expect((await api.list())[0].origin).toBe('https://a.example');
    expect(await api.reveal('l 1', 'serve-pw')).toBe('hunter2');
    expect(json).toHaveBeenLastCalledWith('POST', '/api/logins/l%201/reveal', { password: 'serve-pw' });
    await api.save('', { origin: 'https://a.example', username: 'ada', password: 'x' });
    expect(json).toHaveBeenLastCalledWith('POST', '/api/logins', { origin: 'https://a.example', username: 'ada', password: 'x' });
    await api.save('l1', { origin: 'https://a.example', username: 'ada' });
    expect(json).toHaveBeenLastCalledWith('PUT', '/api/logins/l1', { origin: 'https://a.example', username: 'ada' });
  });
});

import { describe, expect, it, vi } from 'vitest';
import type { Backend, LoginsApi, SavedLogin } from '../api';
import { bothDoors } from '../api/transports.fixture';
import { LoginStore, loginInput } from './logins.svelte';
// Go's real answers (backend/api TestGoldenBrowserAnswers).
import saveLogin from '../api/testdata/SaveLogin.json';
import listLogins from '../api/testdata/ListLogins.json';
import revealLogin from '../api/testdata/RevealLogin.json';

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

describe('backend.logins on both transports', () => {
  const answers = { SaveLogin: saveLogin, ListLogins: listLogins, RevealLogin: revealLogin };

  it("sends each as its call name and arguments, and reads Go's real answers without a password", async () => {
    for (const { door, api, sent } of bothDoors(answers)) {
      const added = await api.logins.save('', { origin: 'https://a.example', username: 'ada', password: 'hunter2' });
      expect(added, door).toMatchObject({ id: 'login-0', origin: 'https://a.example', passwordSet: true });
      await api.logins.save('login-0', { origin: 'https://a.example', username: 'ada' });
      const list = await api.logins.list();
      expect(list.map((l) => l.username)).toEqual(['ada']);
      expect(JSON.stringify(list)).not.toContain('hunter2');
      await api.logins.remove('login-0');
      expect(sent(), door).toEqual([
        ['SaveLogin', { id: '', input: { origin: 'https://a.example', username: 'ada', password: 'hunter2' } }],
        ['SaveLogin', { id: 'login-0', input: { origin: 'https://a.example', username: 'ada' } }],
        ['ListLogins', {}],
        ['DeleteLogin', { id: 'login-0' }],
      ]);
    }
  });

  it("reveals through its own call: the web asks for the server's password again, the desktop does not", async () => {
    const [desktop, web] = bothDoors(answers);
    expect(desktop.api.logins.revealNeedsPassword).toBe(false);
    expect(web.api.logins.revealNeedsPassword).toBe(true);
    expect(await desktop.api.logins.reveal('login-0')).toBe('hunter2');
    expect(await web.api.logins.reveal('login-0', 'serve-pw')).toBe('hunter2');
    expect(desktop.sent()).toEqual([['RevealLogin', { id: 'login-0' }]]);
    expect(web.sent()).toEqual([['RevealLogin', { id: 'login-0', password: 'serve-pw' }]]);
  });

  it('a locked-out reveal says when to try again, alike on both doors', async () => {
    const refusal = { status: 429, body: { error: 'too many wrong passwords: try again in 30 s', field: 'password', retryAfter: 30 } };
    for (const { door, api } of bothDoors({}, refusal)) {
      const err = await api.logins.reveal('login-0', 'wrong').catch((e) => e);
      expect(err.message, door).toBe(refusal.body.error);
      expect(err.field).toBe('password');
      expect(err.retryAfter).toBe(30);
    }
  });
});

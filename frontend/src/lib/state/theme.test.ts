// @vitest-environment jsdom
import { flushSync } from 'svelte';
import { describe, expect, it } from 'vitest';
import { ThemePrefs } from './theme.svelte';

function fakeSystem(light: boolean) {
  const listeners = new Set<() => void>();
  const mq = {
    matches: light,
    addEventListener: (_: string, l: () => void) => listeners.add(l),
    removeEventListener: (_: string, l: () => void) => listeners.delete(l),
  };
  return {
    matchMedia: () => mq,
    set(next: boolean) {
      mq.matches = next;
      for (const l of listeners) l();
    },
    listeners,
  };
}

function memoryStorage(initial: Record<string, string> = {}) {
  const data = { ...initial };
  return { getItem: (k: string) => data[k] ?? null, setItem: (k: string, v: string) => void (data[k] = v), data };
}

describe('ThemePrefs', () => {
  it('follows the system setting by default, live', () => {
    const system = fakeSystem(true);
    const prefs = new ThemePrefs(memoryStorage(), system.matchMedia as never);
    const root = document.createElement('html');
    const stop = prefs.apply(root);
    flushSync();
    expect(root.dataset.theme).toBe('light');
    system.set(false);
    flushSync();
    expect(root.dataset.theme).toBe('dark');
    stop();
    expect(system.listeners.size).toBe(0);
  });

  it('a chosen theme wins over the system and is remembered', () => {
    const storage = memoryStorage();
    const system = fakeSystem(true);
    const prefs = new ThemePrefs(storage, system.matchMedia as never);
    const root = document.createElement('html');
    const stop = prefs.apply(root);
    prefs.set('dark');
    flushSync();
    expect(root.dataset.theme).toBe('dark');
    expect(new ThemePrefs(storage, system.matchMedia as never).choice).toBe('dark');
    stop();
  });

  it('ignores a stored value it does not know', () => {
    const prefs = new ThemePrefs(memoryStorage({ 'clusterspace.theme': 'purple' }), fakeSystem(false).matchMedia as never);
    expect(prefs.choice).toBe('system');
    expect(prefs.theme).toBe('dark');
  });
});

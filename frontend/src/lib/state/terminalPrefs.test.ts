import { describe, expect, it } from 'vitest';
import {
  clampFontSize,
  DEFAULT_TERMINAL_FONT,
  DEFAULT_TERMINAL_FONT_SIZE,
  MAX_TERMINAL_FONT_SIZE,
  MIN_TERMINAL_FONT_SIZE,
  TerminalPrefs,
} from './terminalPrefs.svelte';

function memory() {
  const m = new Map<string, string>();
  return { getItem: (k: string) => m.get(k) ?? null, setItem: (k: string, v: string) => void m.set(k, v), m };
}

describe('TerminalPrefs', () => {
  it('keeps sizes whole and within bounds', () => {
    expect(clampFontSize(14.4)).toBe(14);
    expect(clampFontSize(2)).toBe(MIN_TERMINAL_FONT_SIZE);
    expect(clampFontSize(99)).toBe(MAX_TERMINAL_FONT_SIZE);
    expect(clampFontSize(Number.NaN)).toBe(DEFAULT_TERMINAL_FONT_SIZE);
    expect(clampFontSize('15')).toBe(15);
  });

  it('remembers the font for the next page load; an empty family means the default', () => {
    const store = memory();
    const prefs = new TerminalPrefs(store);
    expect([prefs.fontFamily, prefs.fontSize]).toEqual([DEFAULT_TERMINAL_FONT, DEFAULT_TERMINAL_FONT_SIZE]);
    prefs.set({ family: 'Fira Code', size: 16 });
    const again = new TerminalPrefs(store);
    expect([again.fontFamily, again.fontSize]).toEqual(['Fira Code', 16]);
    again.set({ family: '  ' });
    expect(again.fontFamily).toBe(DEFAULT_TERMINAL_FONT);
  });

  it('ignores a corrupt stored entry', () => {
    const store = memory();
    store.setItem('clusterspace.terminal', '{nope');
    expect(new TerminalPrefs(store).fontSize).toBe(DEFAULT_TERMINAL_FONT_SIZE);
    store.setItem('clusterspace.terminal', JSON.stringify({ family: 3, size: 500 }));
    const p = new TerminalPrefs(store);
    expect([p.fontFamily, p.fontSize]).toEqual([DEFAULT_TERMINAL_FONT, MAX_TERMINAL_FONT_SIZE]);
  });
});

import { describe, expect, it, vi } from 'vitest';
import { base64ToBytes, bytesToBase64, parseTerminalEvent, tabKey } from './terminal';
import { normalizeTab, normalizeTabs } from './types';

describe('base64', () => {
  it('decodes every byte value, not just text', () => {
    const all = Uint8Array.from({ length: 256 }, (_, i) => i);
    expect(base64ToBytes(bytesToBase64(all))).toEqual(all);
    // "hello\r\n" and an escape sequence, as a shell prints them.
    expect(Array.from(base64ToBytes('aGVsbG8NCg=='))).toEqual([104, 101, 108, 108, 111, 13, 10]);
    expect(Array.from(base64ToBytes(btoa('\x1b[31m')))).toEqual([27, 91, 51, 49, 109]);
    expect(base64ToBytes('')).toEqual(new Uint8Array());
  });

  it('keeps UTF-8 as bytes, for xterm to decode', () => {
    const utf8 = new TextEncoder().encode('héllo ✓');
    expect(new TextDecoder().decode(base64ToBytes(bytesToBase64(utf8)))).toBe('héllo ✓');
  });

  it('encodes big chunks', () => {
    // Past the 32 KiB step bytesToBase64 encodes in.
    const big = new Uint8Array(100_000).map((_, i) => i % 251);
    const back = base64ToBytes(bytesToBase64(big));
    expect(back.length).toBe(big.length);
    expect(back.every((b, i) => b === big[i])).toBe(true);
  });
});

describe('normalizeTab', () => {
  it('fills in what Go leaves out (omitempty)', () => {
    expect(normalizeTab({ paneId: 'p', tabId: 't', title: 'bash', running: true, cols: 80, rows: 24, confined: false, active: true })).toEqual({
      paneId: 'p',
      tabId: 't',
      title: 'bash',
      running: true,
      exitCode: null,
      cols: 80,
      rows: 24,
      confined: false,
      active: true,
      remote: '',
      pid: 0,
    });
    expect(normalizeTab({ paneId: 'p', tabId: 't', exitCode: 0 }).exitCode).toBe(0);
    expect(normalizeTabs(null)).toEqual([]);
  });
});

describe('parseTerminalEvent', () => {
  const tab = { paneId: 'p1', tabId: 'tab-1', title: 'bash', running: false, exitCode: 2, cols: 80, rows: 24, confined: true, active: true };

  it('decodes output to bytes', () => {
    const ev = parseTerminalEvent({
      topic: 'terminal',
      type: 'output',
      data: { paneId: 'p1', tabId: 'tab-1', data: btoa('ls\r\n'), resync: false },
    });
    expect(ev).toEqual({ type: 'output', paneId: 'p1', tabId: 'tab-1', data: new TextEncoder().encode('ls\r\n'), resync: false });
  });

  it('reads tab and broadcast events', () => {
    expect(parseTerminalEvent({ topic: 'terminal', type: 'tab', data: { kind: 'exited', tab } })).toEqual({
      type: 'tab',
      kind: 'exited',
      tab: normalizeTab(tab),
    });
    expect(parseTerminalEvent({ topic: 'terminal', type: 'broadcast', data: { paneId: 'p1', include: true } })).toEqual({
      type: 'broadcast',
      paneId: 'p1',
      include: true,
    });
  });

  it('ignores other topics and types silently, and warns about malformed events', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    expect(parseTerminalEvent({ topic: 'workspaces', type: 'output', data: {} })).toBeNull();
    expect(parseTerminalEvent({ topic: 'terminal', type: 'sessions', data: {} })).toBeNull();
    expect(warn).not.toHaveBeenCalled();
    expect(parseTerminalEvent({ topic: 'terminal', type: 'output', data: { paneId: 'p1', tabId: 't', data: '%%%' } })).toBeNull();
    expect(parseTerminalEvent({ topic: 'terminal', type: 'tab', data: { kind: 'exploded', tab } })).toBeNull();
    expect(parseTerminalEvent({ topic: 'terminal', type: 'broadcast', data: { paneId: 'p1' } })).toBeNull();
    expect(warn).toHaveBeenCalledTimes(3);
    warn.mockRestore();
  });

  it('keys tabs without collisions between pane and tab ids', () => {
    expect(tabKey('a', 'bc')).not.toBe(tabKey('ab', 'c'));
  });
});

import { afterEach, describe, expect, it, vi } from 'vitest';
import { desktopNotify, inboxNotifierFor, resetNotifyPermissionAsked } from '../../lib/state/desktopNotify';

afterEach(() => {
  vi.unstubAllGlobals();
  resetNotifyPermissionAsked();
});

describe("the inbox's browser notification", () => {
  it('brings the window forward, closes and lands on its item when clicked', () => {
    const made: Array<{ onclick: (() => void) | null; close: () => void }> = [];
    const N = vi.fn(function (this: { onclick: (() => void) | null; close: () => void }) {
      this.onclick = null;
      this.close = vi.fn();
      made.push(this);
    });
    Object.assign(N, { permission: 'granted' });
    vi.stubGlobal('Notification', N);
    vi.stubGlobal('document', { hasFocus: () => false });
    const focus = vi.fn();
    vi.stubGlobal('window', { focus });
    const landed = vi.fn();

    desktopNotify('Task blocked: build / b', 'task a failed', landed);
    expect(made).toHaveLength(1);
    made[0].onclick?.();
    expect(focus).toHaveBeenCalled();
    expect(made[0].close).toHaveBeenCalled();
    expect(landed).toHaveBeenCalledTimes(1);
  });

  it('is the Notification API in a browser, and nothing in the desktop window (the Go side tells there)', () => {
    expect(inboxNotifierFor({})).toBe(desktopNotify);
    expect(inboxNotifierFor({ windowFocused: async () => {} })).not.toBe(desktopNotify);
  });
});

import { afterEach, describe, expect, it, vi } from 'vitest';
import { desktopNotify, notifierFor, resetNotifyPermissionAsked } from './desktopNotify';

function fakeNotification(permission: NotificationPermission, answer: NotificationPermission = permission) {
  const shown: Array<[string, string | undefined]> = [];
  const N = vi.fn(function (this: unknown, title: string, opts?: NotificationOptions) {
    shown.push([title, opts?.body]);
  }) as unknown as typeof Notification & { permission: NotificationPermission };
  Object.assign(N, { permission, requestPermission: vi.fn(async () => answer) });
  vi.stubGlobal('Notification', N);
  return { N, shown };
}

function focus(has: boolean) {
  vi.stubGlobal('document', { hasFocus: () => has });
}

afterEach(() => {
  vi.unstubAllGlobals();
  resetNotifyPermissionAsked();
});

describe('desktopNotify', () => {
  it('shows a notification only while the app does not have the focus', () => {
    const { shown } = fakeNotification('granted');
    focus(true);
    desktopNotify('Goal completed', 'Write done.txt');
    expect(shown).toEqual([]);
    focus(false);
    desktopNotify('Goal completed', 'Write done.txt');
    expect(shown).toEqual([['Goal completed', 'Write done.txt']]);
  });

  it('asks for permission once, on first need, and shows it when granted', async () => {
    const { N, shown } = fakeNotification('default', 'granted');
    focus(false);
    desktopNotify('A goal needs your approval', 'browser_navigate: x');
    desktopNotify('A goal needs your approval', 'browser_click: x');
    await vi.waitFor(() => expect(shown).toHaveLength(1));
    expect(N.requestPermission).toHaveBeenCalledTimes(1);
  });

  it('does nothing when denied or when the webview has no Notification API', () => {
    const { shown } = fakeNotification('denied');
    focus(false);
    desktopNotify('Goal failed', '');
    expect(shown).toEqual([]);
    vi.stubGlobal('Notification', undefined);
    expect(() => desktopNotify('Goal failed', '')).not.toThrow();
  });
});

describe('notifierFor', () => {
  it('in the desktop window shows nothing itself and keeps Go told about the focus', () => {
    const listeners: Record<string, () => void> = {};
    vi.stubGlobal('window', { addEventListener: (type: string, f: () => void) => (listeners[type] = f) });
    const { shown } = fakeNotification('granted');
    let has = true;
    vi.stubGlobal('document', { hasFocus: () => has });
    const windowFocused = vi.fn(async (_focused: boolean) => {});
    const n = notifierFor({ windowFocused });
    expect(windowFocused).toHaveBeenLastCalledWith(true);
    has = false;
    listeners.blur();
    expect(windowFocused).toHaveBeenLastCalledWith(false);
    n('Goal completed', 'Write done.txt');
    expect(shown).toEqual([]);
    has = true;
    listeners.focus();
    expect(windowFocused).toHaveBeenLastCalledWith(true);
    windowFocused.mockRejectedValueOnce(new Error('gone'));
    expect(() => listeners.blur()).not.toThrow();
  });

  it('falls back to the Notification API in a browser', () => {
    const { shown } = fakeNotification('granted');
    focus(false);
    notifierFor({})('Goal aborted', 'x');
    expect(shown).toEqual([['Goal aborted', 'x']]);
  });
});

import type { Backend } from '../api';

/** Tells the user something while they look elsewhere; onclick runs when they click it. */
export type Notify = (title: string, body: string, onclick?: () => void) => void;

let permissionAsked = false;

/**
 * A desktop notification when the app does not have the focus, through the Notification API
 * where the webview offers it. Permission is asked once, the first time one is needed; without
 * it (or the API) nothing happens: the dashboard and the modal still show everything.
 */
export const desktopNotify: Notify = (title, body, onclick) => {
  if (typeof document === 'undefined' || document.hasFocus()) return;
  if (typeof Notification === 'undefined') return;
  const show = () => {
    try {
      const n = new Notification(title, { body });
      // A click brings the window forward and lands on what the notification was about.
      n.onclick = () => {
        window.focus();
        n.close();
        onclick?.();
      };
    } catch {
      // Best effort: some webviews expose the API but refuse to construct one.
    }
  };
  try {
    if (Notification.permission === 'granted') {
      show();
    } else if (Notification.permission === 'default' && !permissionAsked) {
      permissionAsked = true;
      void Promise.resolve(Notification.requestPermission())
        .then((p) => {
          if (p === 'granted') show();
        })
        .catch(() => {});
    }
  } catch {
    // Best effort, as above.
  }
};

/**
 * The notifier for a backend. In the desktop window the Go side raises the goal notifications
 * itself, through the desktop's notification service (the webview offers pages none), so here
 * nothing is shown: the page only keeps Go told whether the window has the focus. In a browser
 * the Notification API shows them. Either way only while the app does not have the focus.
 */
export function notifierFor(backend: Pick<Backend, 'windowFocused'>): Notify {
  const report = backend.windowFocused?.bind(backend);
  if (!report) return desktopNotify;
  if (typeof window !== 'undefined' && typeof document !== 'undefined') {
    const tell = () => void report(document.hasFocus()).catch(() => {});
    window.addEventListener('focus', tell);
    window.addEventListener('blur', tell);
    tell();
  }
  return () => {};
}

/**
 * The inbox's notifier: in a browser the Notification API, whose click lands on the item. In the
 * desktop window the webview offers none, so nothing is shown there.
 */
export function inboxNotifierFor(backend: Pick<Backend, 'windowFocused'>): Notify {
  return backend.windowFocused ? () => {} : desktopNotify;
}

/** For tests: forget that permission was asked. */
export function resetNotifyPermissionAsked(): void {
  permissionAsked = false;
}

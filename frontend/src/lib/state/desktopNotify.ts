import type { Backend } from '../api';

/** Tells the user something while they look elsewhere. */
export type Notify = (title: string, body: string) => void;

let permissionAsked = false;

/**
 * A desktop notification when the app does not have the focus, through the Notification API
 * where the webview offers it. Permission is asked once, the first time one is needed; without
 * it (or the API) nothing happens: the dashboard and the modal still show everything.
 */
export const desktopNotify: Notify = (title, body) => {
  if (typeof document === 'undefined' || document.hasFocus()) return;
  if (typeof Notification === 'undefined') return;
  const show = () => {
    try {
      new Notification(title, { body });
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
 * The notifier for a backend: the desktop window's webview offers pages no notifications, so
 * there the Go side shows them through the desktop's notification service; in a browser the
 * Notification API does. Either way only while the app does not have the focus.
 */
export function notifierFor(backend: Pick<Backend, 'notify'>): Notify {
  const viaBackend = backend.notify?.bind(backend);
  if (!viaBackend) return desktopNotify;
  return (title, body) => {
    if (typeof document !== 'undefined' && document.hasFocus()) return;
    void viaBackend(title, body).catch(() => {});
  };
}

/** For tests: forget that permission was asked. */
export function resetNotifyPermissionAsked(): void {
  permissionAsked = false;
}

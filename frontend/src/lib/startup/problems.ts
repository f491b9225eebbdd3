// The desktop window's webview has no console anyone sees: an uncaught error or a rejected
// promise nobody handled would vanish. They are handed to the backend, which logs them, so a
// person reading the app's output (or a test) learns why part of the window did not come up.

import type { Backend } from '../api';

/** The most a single report carries; a stack beyond it adds nothing a person reads. */
const MAX_REPORT_CHARS = 2000;
/** Reports per window lifetime: a loop that throws must not flood the log. */
const MAX_REPORTS = 50;

function describe(reason: unknown): string {
  if (reason instanceof Error) return reason.stack && reason.stack.includes(reason.message) ? reason.stack : `${reason.name}: ${reason.message}\n${reason.stack ?? ''}`;
  if (typeof reason === 'string') return reason;
  try {
    return JSON.stringify(reason);
  } catch {
    return String(reason);
  }
}

/** Listens for uncaught errors and unhandled rejections on `target` and reports each through `backend`. Returns what stops it. */
export function reportUncaughtErrors(target: Pick<Window, 'addEventListener' | 'removeEventListener'>, backend: Pick<Backend, 'reportProblem'>): () => void {
  if (!backend.reportProblem) return () => {};
  let sent = 0;
  const send = (what: string, reason: unknown) => {
    if (sent >= MAX_REPORTS) return;
    sent++;
    backend.reportProblem?.(`${what}: ${describe(reason)}`.slice(0, MAX_REPORT_CHARS));
  };
  const onError = (e: Event) => {
    const ev = e as ErrorEvent;
    send('uncaught error', ev.error ?? `${ev.message} (${ev.filename}:${ev.lineno})`);
  };
  const onRejection = (e: Event) => send('unhandled rejection', (e as PromiseRejectionEvent).reason);
  target.addEventListener('error', onError);
  target.addEventListener('unhandledrejection', onRejection);
  return () => {
    target.removeEventListener('error', onError);
    target.removeEventListener('unhandledrejection', onRejection);
  };
}

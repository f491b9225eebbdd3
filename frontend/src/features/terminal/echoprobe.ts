// The keystroke-echo probe the desktop window runs when the app is started with
// CLUSTERSPACE_ECHO_PROBE=N (for `make bench`; the served UI's benchmark injects the same logic
// through Chromium). For each printable key typed into a terminal it keeps the time from the
// key going down (the event's own timestamp where it is on the page's clock) to the
// terminal's buffer first holding the echo (the cursor moved past it), and hands the samples
// over once it has N of them, or once typing has stopped for IDLE_REPORT_MS with fewer (a key
// typed before the last one's echo arrived replaces it, so a burst can lose samples).

import { focusedTerminalPaneId, terminalView, type TerminalHandle } from './registry';

/** How long after the last key a probe with fewer samples than asked reports what it has. */
export const IDLE_REPORT_MS = 3000;

interface Pending {
  at: number;
  view: TerminalHandle;
  target: number;
  stop: () => void;
}

/** Starts the probe on `target`'s key events; returns what stops it. */
export function startEchoProbe(
  target: Pick<Document, 'addEventListener' | 'removeEventListener'>,
  keys: number,
  report: (samplesMs: number[]) => void,
  now: () => number = () => performance.now(),
): () => void {
  const samples: number[] = [];
  let pending: Pending | null = null;
  let reported = false;
  let idle: ReturnType<typeof setTimeout> | undefined;
  const finish = () => {
    clearTimeout(idle);
    if (reported || samples.length === 0) return;
    reported = true;
    report(samples.slice());
  };
  const settle = () => {
    if (!pending || pending.view.cursorOffset() < pending.target) return;
    samples.push(now() - pending.at);
    pending.stop();
    pending = null;
    if (samples.length === keys) finish();
  };
  const onKey = (e: Event) => {
    const ev = e as KeyboardEvent;
    if (ev.key.length !== 1 || reported) return;
    clearTimeout(idle);
    idle = setTimeout(finish, IDLE_REPORT_MS);
    const paneId = focusedTerminalPaneId();
    const view = paneId ? terminalView(paneId) : undefined;
    if (!view) return;
    pending?.stop();
    // The event's own timestamp counts the time the key waited in the queue; WebKitGTK stamps
    // keys on another clock (from the X server's event time), so there the handler's now is used.
    const t = now();
    const at = ev.timeStamp > 0 && ev.timeStamp <= t && t - ev.timeStamp < 1000 ? ev.timeStamp : t;
    pending = { at, view, target: view.cursorOffset() + 1, stop: () => {} };
    pending.stop = view.onWriteParsed(settle);
  };
  target.addEventListener('keydown', onKey, true);
  return () => {
    clearTimeout(idle);
    target.removeEventListener('keydown', onKey, true);
    pending?.stop();
  };
}

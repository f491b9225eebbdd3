// Startup marks: when the bundle began to run, when the workspace list arrived and when the
// restored workspace was first drawn, as wall-clock Unix milliseconds, so a test or benchmark
// outside the page (the desktop window under Xvfb, headless Chromium) can compare them with the
// moment it launched the app. Read on the page as window.__clusterspaceStartup; the desktop
// window also hands them to Go, which logs them (the webview's console goes nowhere).

export type StartupMark = 'script' | 'mounted' | 'list-asked' | 'list-answered' | 'workspaces' | 'painted' | 'loading-shown' | 'retry-shown';

const marks: Partial<Record<StartupMark, number>> = {};

declare global {
  interface Window {
    /** For the first-paint benchmark and tests: the startup marks so far. */
    __clusterspaceStartup?: Partial<Record<StartupMark, number>>;
  }
}

if (typeof window !== 'undefined') window.__clusterspaceStartup = marks;

function now(): number {
  return performance.timeOrigin + performance.now();
}

/** Records the first time `name` happened; later ones are ignored. */
export function markStartup(name: StartupMark): void {
  if (marks[name] === undefined) marks[name] = Math.round(now());
}

export function startupMarks(): Partial<Record<StartupMark, number>> {
  return { ...marks };
}

/**
 * Calls `done` once the browser has drawn what the DOM shows now: the first animation frame
 * runs before the paint, so the paint has happened by the time a task queued from it runs.
 */
export function afterNextPaint(done: () => void): void {
  let called = false;
  const once = () => {
    if (called) return;
    called = true;
    done();
  };
  // A hidden page (a background browser tab, a minimised window) runs no animation frames:
  // the work must not wait for the page to be looked at.
  setTimeout(once, PAINT_WAIT_LIMIT_MS);
  if (typeof requestAnimationFrame === 'undefined') {
    setTimeout(once, 0);
    return;
  }
  requestAnimationFrame(() => setTimeout(once, 0));
}

/** The longest afterNextPaint waits for a frame before it goes ahead anyway. */
const PAINT_WAIT_LIMIT_MS = 1000;

// Work that can wait until the workspace is on screen (creating the terminals' xterm views,
// each a few hundred milliseconds of main-thread work with a WebGL renderer) waits for the
// first paint when the app holds it back; then it runs one piece per task, so the window stays
// responsive while the terminals come up.
let holding = false;
const deferred: Array<() => void> = [];

/** The app calls this before it mounts panes; from then on afterFirstPaint defers until firstPaintDone. */
export function holdUntilFirstPaint(): void {
  holding = true;
}

/** The workspace is on screen: deferred work runs, one piece per task, in order. */
export function firstPaintDone(): void {
  if (!holding) return;
  holding = false;
  const run = () => {
    const next = deferred.shift();
    if (!next) return;
    next();
    if (deferred.length > 0) setTimeout(run, 0);
  };
  setTimeout(run, 0);
}

/**
 * Runs `work` once the first paint is done (at once when nothing holds it back). Returns a
 * function that cancels it if it has not run yet.
 */
export function afterFirstPaint(work: () => void): () => void {
  if (!holding && deferred.length === 0) {
    work();
    return () => {};
  }
  let cancelled = false;
  const entry = () => {
    if (!cancelled) work();
  };
  deferred.push(entry);
  return () => {
    cancelled = true;
    const i = deferred.indexOf(entry);
    if (i >= 0) deferred.splice(i, 1);
  };
}

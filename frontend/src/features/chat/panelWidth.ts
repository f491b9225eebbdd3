// The chat panel's width: a view preference of this browser (or desktop window), so it lives in
// localStorage, like the terminal font.

const STORAGE_KEY = 'clusterspace.chatWidth';
export const DEFAULT_WIDTH = 400;
/** Narrower, and code blocks and tool results are unreadable. */
export const MIN_WIDTH = 300;
/** The panes keep at least this much of the window. */
const MIN_PANES_WIDTH = 320;

/** A width the panel may take in a window this wide. */
export function clampWidth(w: number, windowWidth: number): number {
  const max = Math.max(MIN_WIDTH, windowWidth - MIN_PANES_WIDTH);
  if (!Number.isFinite(w)) return DEFAULT_WIDTH;
  return Math.round(Math.min(max, Math.max(MIN_WIDTH, w)));
}

export function loadWidth(): number {
  try {
    const v = Number(globalThis.localStorage?.getItem(STORAGE_KEY));
    if (v) return clampWidth(v, globalThis.innerWidth ?? v + MIN_PANES_WIDTH);
  } catch {
    // No storage: the default applies.
  }
  return DEFAULT_WIDTH;
}

export function saveWidth(w: number): void {
  try {
    globalThis.localStorage?.setItem(STORAGE_KEY, String(w));
  } catch {
    // Best effort: the width just does not outlive the page.
  }
}

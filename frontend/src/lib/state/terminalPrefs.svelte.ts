// How terminals look: font family and size. A view preference of this browser (or desktop
// window), so it lives in localStorage rather than in the backend; every open terminal follows a
// change at once.

/** The app's own monospace stack (app.css --font-mono): system fonts only, nothing fetched. */
export const DEFAULT_TERMINAL_FONT = "ui-monospace, 'DejaVu Sans Mono', 'Cascadia Mono', Menlo, monospace";
export const DEFAULT_TERMINAL_FONT_SIZE = 13;
/** Below 8 px text is unreadable; above 32 px a pane holds too few columns to be useful. */
export const MIN_TERMINAL_FONT_SIZE = 8;
export const MAX_TERMINAL_FONT_SIZE = 32;

const STORAGE_KEY = 'clusterspace.terminal';

type KeyValueStore = Pick<Storage, 'getItem' | 'setItem'>;

export interface TerminalFont {
  family: string;
  size: number;
}

/** A font size the terminal accepts: whole pixels within the bounds; anything else is the default. */
export function clampFontSize(n: unknown): number {
  const v = typeof n === 'number' ? n : Number(n);
  if (!Number.isFinite(v)) return DEFAULT_TERMINAL_FONT_SIZE;
  return Math.min(MAX_TERMINAL_FONT_SIZE, Math.max(MIN_TERMINAL_FONT_SIZE, Math.round(v)));
}

export class TerminalPrefs {
  fontFamily = $state(DEFAULT_TERMINAL_FONT);
  fontSize = $state(DEFAULT_TERMINAL_FONT_SIZE);

  private readonly storage: KeyValueStore | null;

  constructor(storage: KeyValueStore | null = browserLocalStorage()) {
    this.storage = storage;
    try {
      const raw = storage?.getItem(STORAGE_KEY);
      if (raw) {
        const v = JSON.parse(raw) as Partial<TerminalFont>;
        if (typeof v.family === 'string' && v.family.trim()) this.fontFamily = v.family;
        if (v.size !== undefined) this.fontSize = clampFontSize(v.size);
      }
    } catch {
      // A corrupt entry is the same as none: the defaults apply.
    }
  }

  /** An empty family means the default. */
  set(font: Partial<TerminalFont>): void {
    if (font.family !== undefined) this.fontFamily = font.family.trim() || DEFAULT_TERMINAL_FONT;
    if (font.size !== undefined) this.fontSize = clampFontSize(font.size);
    try {
      this.storage?.setItem(STORAGE_KEY, JSON.stringify({ family: this.fontFamily, size: this.fontSize }));
    } catch {
      // Best effort: without storage the choice just does not outlive the page.
    }
  }

  reset(): void {
    this.set({ family: DEFAULT_TERMINAL_FONT, size: DEFAULT_TERMINAL_FONT_SIZE });
  }
}

function browserLocalStorage(): KeyValueStore | null {
  try {
    return typeof localStorage !== 'undefined' ? localStorage : null;
  } catch {
    return null; // some privacy modes throw on access
  }
}

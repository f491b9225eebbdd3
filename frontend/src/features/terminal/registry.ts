// The terminal views on the page, by pane: what commands, shortcuts and the end-to-end tests
// reach a live xterm through. At most one view per pane (a pane shows its active tab).

export interface TerminalHandle {
  /** The shown tab's buffer as plain text (see bufferText). */
  text(): string;
  /** The terminal's size in cells now, or null while it has no room on screen. */
  size(): { cols: number; rows: number } | null;
  focus(): void;
  /** For the keystroke-echo benchmark: the cursor as cells from the buffer's start. */
  cursorOffset(): number;
  /** For the keystroke-echo benchmark: called after each write is parsed into the buffer. */
  onWriteParsed(cb: () => void): () => void;
}

const views = new Map<string, TerminalHandle>();

/** Returns the function that removes this registration (and only this one). */
export function registerTerminal(paneId: string, handle: TerminalHandle): () => void {
  views.set(paneId, handle);
  return () => {
    if (views.get(paneId) === handle) views.delete(paneId);
  };
}

export function terminalView(paneId: string): TerminalHandle | undefined {
  return views.get(paneId);
}

/** The pane's shown terminal text; '' when the pane shows no terminal. */
export function terminalText(paneId: string): string {
  return views.get(paneId)?.text() ?? '';
}

/** The terminal pane holding keyboard focus (in its screen or its header), if any. */
export function focusedTerminalPaneId(): string | null {
  if (typeof document === 'undefined') return null;
  const el = document.activeElement?.closest<HTMLElement>('[data-testid="pane"][data-kind="terminal"]');
  return el?.dataset.paneId ?? null;
}

declare global {
  interface Window {
    /** For the end-to-end tests: the active tab's buffer of a pane, lines joined by "\n". */
    __clusterspaceTerminalText?: (paneId: string) => string;
    /** For the keystroke-echo benchmark: a pane's terminal view, if it shows one. */
    __clusterspaceTerminalView?: (paneId: string) => TerminalHandle | undefined;
  }
}

if (typeof window !== 'undefined') {
  window.__clusterspaceTerminalText = terminalText;
  window.__clusterspaceTerminalView = terminalView;
}

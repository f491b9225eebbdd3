// Keyboard focus and the pane elements on the page: where focus is, and handing it to a pane.
import { terminalView } from '../terminal/registry';

const PANE = '[data-testid="pane"]';

function paneElement(paneId: string): HTMLElement | null {
  // Compared, not put in a selector: an id is data and needs no escaping this way.
  return [...document.querySelectorAll<HTMLElement>(PANE)].find((el) => el.dataset.paneId === paneId) ?? null;
}

/** The pane holding keyboard focus (its screen, page or header), if any. */
export function domFocusedPaneId(): string | null {
  if (typeof document === 'undefined') return null;
  return document.activeElement?.closest<HTMLElement>(PANE)?.dataset.paneId ?? null;
}

/**
 * Whether keyboard focus is in a pane, or nowhere in particular (the page itself): where the
 * pane keys (Ctrl+Enter, Alt+Arrow) apply. Not in the chat, a dialog, a menu or a panel.
 */
export function focusInPaneArea(): boolean {
  if (typeof document === 'undefined') return false;
  const el = document.activeElement;
  if (!el || el === document.body || el === document.documentElement) return true;
  return el.closest(PANE) !== null;
}

/**
 * Gives the pane the keyboard: its terminal, else its page's canvas, else the pane itself. Only
 * when focus is in the pane area, so a focus change the agent makes never takes the keyboard
 * from the chat input or a dialog the person is typing in.
 */
export function focusPaneElement(paneId: string): void {
  if (typeof document === 'undefined' || !focusInPaneArea()) return;
  const el = paneElement(paneId);
  if (!el || el.contains(document.activeElement)) return;
  const term = terminalView(paneId);
  if (term) {
    term.focus();
    if (el.contains(document.activeElement)) return;
  }
  const target =
    el.querySelector<HTMLElement>('[data-testid="browser-view"][tabindex], .body [tabindex="0"]') ??
    el.querySelector<HTMLElement>('[data-testid="pane-header"]');
  target?.focus({ preventScroll: true });
}

/** How long a pane is waited for to take the keyboard at start (its xterm comes after the first paint). */
const START_FOCUS_WAIT_MS = 15000;
const START_FOCUS_POLL_MS = 50;

/**
 * Gives the pane the keyboard as soon as it can take it, for a workspace just shown (at start,
 * after login, on a workspace switch): typing then reaches its shell without a click. A
 * terminal's xterm is made after the first paint, so until then the pane's header holds focus
 * and this keeps trying. It gives up as soon as the person puts focus anywhere else. Returns what
 * stops it.
 */
export function focusPaneWhenReady(paneId: string, waitMs = START_FOCUS_WAIT_MS): () => void {
  if (typeof document === 'undefined' || !paneId) return () => {};
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  const deadline = Date.now() + waitMs;
  const attempt = () => {
    if (stopped) return;
    const el = paneElement(paneId);
    const active = document.activeElement;
    const header = el?.querySelector('[data-testid="pane-header"]');
    const free = !active || active === document.body || active === document.documentElement || !active.isConnected || active === header;
    if (!free) return; // the person is at work somewhere: leave the keyboard there
    if (el) {
      const term = terminalView(paneId);
      if (term) {
        term.focus();
        if (el.contains(document.activeElement) && document.activeElement !== header) return;
      } else if (el.dataset.kind === 'browser') {
        // A browser pane puts the cursor in its URL bar itself when its page is blank, once it
        // knows its tabs (BrowserView); until then focus is left for it to take.
        const known = el.querySelector<HTMLElement>('[data-testid="browser-view"]')?.dataset.tabId;
        if (known || Date.now() >= deadline) {
          if (!el.contains(document.activeElement)) timer = setTimeout(() => !stopped && focusLostOrHeader(el) && focusPaneElement(paneId), START_FOCUS_POLL_MS);
          return;
        }
      } else if (el.dataset.kind !== 'terminal') {
        focusPaneElement(paneId);
        return;
      } else if (!el.contains(document.activeElement)) {
        if (header instanceof HTMLElement) header.focus({ preventScroll: true }); // the pane, until its screen exists
      }
    }
    if (Date.now() < deadline) timer = setTimeout(attempt, START_FOCUS_POLL_MS);
  };
  attempt();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

/** Whether focus is nowhere, or only on the pane's header (nobody is typing anywhere). */
function focusLostOrHeader(pane: HTMLElement): boolean {
  const a = document.activeElement;
  return !a || a === document.body || a === document.documentElement || !a.isConnected || a === pane.querySelector('[data-testid="pane-header"]');
}

/** The pane to start typing in: the maximized one, else the focused one, else the first (top-left). */
export function startPaneId(panes: readonly { id: string; row: number; col: number }[], focusedId: string, maximizedId: string): string {
  if (maximizedId) return maximizedId;
  if (focusedId && panes.some((p) => p.id === focusedId)) return focusedId;
  const first = [...panes].sort((a, b) => a.row - b.row || a.col - b.col)[0];
  return first?.id ?? '';
}

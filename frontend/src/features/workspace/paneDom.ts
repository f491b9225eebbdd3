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

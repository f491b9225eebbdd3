// Keyboard focus around dialogs and panels: when one opens, where focus was is remembered;
// when it closes and focus fell to nothing (its focused element went with it), focus goes back
// there. Without this, closing the Goal Dashboard with Esc left the keyboard nowhere: typing did
// nothing until a click.

/** A dialog or panel: whether it is open, and the element it draws (to tell its focus apart). */
export interface Overlay {
  name: string;
  open: () => boolean;
  /** CSS selector of its root element. */
  root: string;
}

/** Whether focus is nowhere in particular: the page itself, or an element no longer on it. */
export function focusLost(doc: Document = document): boolean {
  const el = doc.activeElement;
  return !el || el === doc.body || el === doc.documentElement || !el.isConnected;
}

function focusable(el: HTMLElement | null): el is HTMLElement {
  // A removed element, or one hidden (display: none) with its pane, cannot take focus back.
  return !!el && el.isConnected && el.getClientRects().length > 0;
}

/**
 * Follows focus and the overlays. `update` is called whenever the set of open overlays may have
 * changed (an effect reading each overlay's `open`); `fallback` gives focus to the workspace
 * when the remembered element is gone (its pane was removed, its workspace closed).
 */
export class FocusReturn {
  /** The element focused now, and the one before it (the overlay may have taken focus first). */
  private current: HTMLElement | null = null;
  private previous: HTMLElement | null = null;
  private wasOpen = new Set<string>();
  /** Overlay name → where focus was when it opened. */
  private returnTo = new Map<string, HTMLElement | null>();

  constructor(
    private readonly overlays: readonly Overlay[],
    private readonly fallback: () => void,
  ) {}

  /** Starts following focus; returns what stops it. */
  track(doc: Document = document): () => void {
    const onFocus = (e: FocusEvent) => {
      const el = e.target instanceof HTMLElement ? e.target : null;
      if (!el || el === this.current) return;
      this.previous = this.current;
      this.current = el;
    };
    doc.addEventListener('focusin', onFocus, true);
    this.current = doc.activeElement instanceof HTMLElement && !focusLost(doc) ? doc.activeElement : null;
    return () => doc.removeEventListener('focusin', onFocus, true);
  }

  /** Which overlays are open now: call after the DOM shows the change. */
  update(doc: Document = document): void {
    const closed: string[] = [];
    const opened: Overlay[] = [];
    for (const o of this.overlays) {
      const open = o.open();
      if (open && !this.wasOpen.has(o.name)) opened.push(o);
      else if (!open && this.wasOpen.has(o.name)) closed.push(o.name);
    }
    // Where the closing ones would have sent focus back, newest last.
    const handBack = closed.map((name) => this.returnTo.get(name) ?? null);
    for (const name of closed) {
      this.wasOpen.delete(name);
      this.returnTo.delete(name);
    }
    for (const o of opened) {
      this.wasOpen.add(o.name);
      // The overlay may already hold focus (a field focused on mount): then focus was where it
      // was just before. One opened from another (the palette's command) returns to where that
      // one would have.
      const inside = this.current && doc.querySelector(o.root)?.contains(this.current);
      let before = inside ? this.previous : this.current;
      for (const el of [...handBack].reverse()) if (!focusable(before) && focusable(el)) before = el;
      this.returnTo.set(o.name, before);
    }
    if (opened.length > 0) {
      // A dialog that opened without taking the keyboard gets it, so Esc reaches it.
      const newest = doc.querySelector<HTMLElement>(opened[opened.length - 1].root);
      if (newest?.hasAttribute('tabindex') && !newest.contains(doc.activeElement)) newest.focus({ preventScroll: true });
      return;
    }
    if (closed.length === 0 || !focusLost(doc)) return;
    // The newest remembered place that is still on the page wins; the workspace otherwise.
    for (const el of handBack.reverse()) {
      if (focusable(el)) {
        el.focus({ preventScroll: true });
        if (!focusLost(doc)) return;
      }
    }
    this.fallback();
  }
}

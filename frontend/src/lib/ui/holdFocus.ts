import type { Attachment } from 'svelte/attachments';

/** The dialog a panel belongs to (Modal puts role="dialog" on its panel). */
function dialogOf(el: HTMLElement): HTMLElement {
  return el.closest<HTMLElement>('[role=dialog]') ?? el;
}

/** True when another modal dialog (a confirmation, say) was opened over this one. */
function coveredBy(dialog: HTMLElement): boolean {
  const all = [...document.querySelectorAll<HTMLElement>('[role=dialog][aria-modal=true]')];
  return all.length > 0 && all[all.length - 1] !== dialog;
}

/**
 * Keeps the keyboard focus inside a dialog that stays open while its content changes, and
 * gives it back on close (an attachment: `{@attach holdFocus(opener)}` on an element inside the
 * dialog).
 *
 * Without it, a Save that closes a form removes the focused button, the focus falls to the
 * page's body, and Esc no longer reaches the dialog. So: whenever the DOM changes and the focus
 * has fallen to the body, it goes back to the element last focused in the dialog if that is
 * still there, else to the dialog itself. Tab past the last control comes back in too. When a
 * dialog opened over this one (a confirmation) is on top, it is left alone. On close the focus
 * returns to `opener`, where it was before the dialog opened, if that is still on the page.
 */
export function holdFocus(opener: Element | null): Attachment<HTMLElement> {
  return (el) => {
    const dialog = dialogOf(el);
    let last: HTMLElement | null = null;

    const refocus = () => {
      if (coveredBy(dialog)) return;
      const target = last && last.isConnected && dialog.contains(last) && !last.matches(':disabled') ? last : dialog;
      target.focus();
    };
    const onfocusin = (e: FocusEvent) => {
      const t = e.target as HTMLElement | null;
      if (!t) return;
      if (dialog.contains(t)) last = t;
      // Tabbed out of the dialog onto the page behind it (not into a dialog over it).
      else if (!t.closest('[role=dialog]')) refocus();
    };
    const lost = () => {
      const a = document.activeElement;
      if (!a || a === document.body) refocus();
    };
    const observer = new MutationObserver(lost);
    observer.observe(document.body, { childList: true, subtree: true, attributes: true, attributeFilter: ['disabled'] });
    document.addEventListener('focusin', onfocusin);
    if (dialog.contains(document.activeElement)) last = document.activeElement as HTMLElement;

    return () => {
      observer.disconnect();
      document.removeEventListener('focusin', onfocusin);
      // Back to where the person was, unless they moved on to something else meanwhile.
      const a = document.activeElement;
      const stillOurs = !a || a === document.body || dialog.contains(a);
      if (stillOurs && opener instanceof HTMLElement && opener.isConnected && opener !== document.body) opener.focus();
    };
  };
}

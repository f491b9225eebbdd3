// DOM events on a browser pane's canvas, turned into the backend's input events
// (backend/browser/input.go). Pure functions: the view supplies the page coordinates.
import type { BrowserInputEvent } from '../../lib/api';

export type KeyEventLike = Pick<KeyboardEvent, 'key' | 'code' | 'ctrlKey' | 'altKey' | 'metaKey' | 'shiftKey' | 'isComposing'>;
export type ModifierLike = Pick<MouseEvent, 'ctrlKey' | 'altKey' | 'metaKey' | 'shiftKey'>;

/** Keys that stand for no key of their own: an IME at work, a dead key waiting for the next. */
const NO_KEY = new Set(['', 'Dead', 'Unidentified', 'Process', 'Compose', 'AltGraph']);

/** Pixels per line and per page when a wheel reports lines or pages instead of pixels. */
export const WHEEL_LINE_PX = 16;

/** The held modifiers, only those held (the backend reads absent as false). */
export function modifiers(e: ModifierLike): Pick<BrowserInputEvent, 'alt' | 'ctrl' | 'meta' | 'shift'> {
  const m: Pick<BrowserInputEvent, 'alt' | 'ctrl' | 'meta' | 'shift'> = {};
  if (e.altKey) m.alt = true;
  if (e.ctrlKey) m.ctrl = true;
  if (e.metaKey) m.meta = true;
  if (e.shiftKey) m.shift = true;
  return m;
}

/**
 * Ctrl+V, Cmd+V, Ctrl+Shift+V and Shift+Insert paste: the page cannot read this machine's
 * clipboard, so the view lets the browser fire its paste event and sends the text from it.
 */
export function isPasteKey(e: KeyEventLike): boolean {
  const k = e.key.toLowerCase();
  if ((e.ctrlKey || e.metaKey) && !e.altKey && k === 'v') return true;
  return e.shiftKey && !e.ctrlKey && !e.metaKey && !e.altKey && e.key === 'Insert';
}

/**
 * The backend event for a key going down or up, or null for a key with nothing to send.
 * Printable keys go as key events too: the backend types their text with the keydown (so the
 * page sees keydown, keypress, input and keyup, as from a keyboard). Text a key event cannot
 * carry goes as 'text': AltGr characters where AltGr reads as Ctrl+Alt (Windows), and what an
 * IME composes (see textInput).
 */
export function keyInput(e: KeyEventLike, type: 'keydown' | 'keyup'): BrowserInputEvent | null {
  if (e.isComposing || NO_KEY.has(e.key)) return null;
  const printable = [...e.key].length === 1;
  if (printable && e.ctrlKey && e.altKey && !e.metaKey) {
    return type === 'keydown' ? { type: 'text', text: e.key } : null;
  }
  const ev: BrowserInputEvent = { type, key: e.key };
  if (e.code) ev.code = e.code;
  return { ...ev, ...modifiers(e) };
}

/** Text an IME or a paste delivers, typed into the page as it is. */
export function textInput(text: string): BrowserInputEvent | null {
  return text ? { type: 'text', text } : null;
}

/** The backend's name for a DOM mouse button (0 left, 1 middle, 2 right); null for the others. */
export function buttonName(button: number): 'left' | 'middle' | 'right' | null {
  switch (button) {
    case 0:
      return 'left';
    case 1:
      return 'middle';
    case 2:
      return 'right';
    default:
      return null;
  }
}

/** A wheel's deltas in pixels, whatever unit the device reported (pageHeight for page steps). */
export function wheelPixels(e: Pick<WheelEvent, 'deltaX' | 'deltaY' | 'deltaMode'>, pageHeight: number): { deltaX: number; deltaY: number } {
  const unit = e.deltaMode === 1 ? WHEEL_LINE_PX : e.deltaMode === 2 ? Math.max(pageHeight, 1) : 1;
  return { deltaX: e.deltaX * unit, deltaY: e.deltaY * unit };
}

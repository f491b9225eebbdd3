// @vitest-environment jsdom
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FocusReturn } from './focusReturn';

// jsdom lays nothing out: every element on the page counts as shown.
beforeEach(() => {
  vi.spyOn(Element.prototype, 'getClientRects').mockImplementation(function (this: Element) {
    return (this.isConnected ? [{}] : []) as unknown as DOMRectList;
  });
});
afterEach(() => {
  vi.restoreAllMocks();
  document.body.innerHTML = '';
});

function el(html: string): HTMLElement {
  const box = document.createElement('div');
  box.innerHTML = html;
  const first = box.firstElementChild as HTMLElement;
  document.body.appendChild(first);
  return first;
}

describe('FocusReturn', () => {
  it('gives the keyboard back to where it was when a dialog closes and took its focus with it', () => {
    const pane = el('<textarea data-pane></textarea>');
    const open = { dialog: false };
    const fallback = vi.fn();
    const fr = new FocusReturn([{ name: 'dialog', open: () => open.dialog, root: '[data-testid=dialog]' }], fallback);
    const stop = fr.track();
    pane.focus();
    // The dialog opens and focuses its field before the update sees it.
    open.dialog = true;
    const dialog = el('<div data-testid="dialog" tabindex="-1"><input /></div>');
    dialog.querySelector('input')!.focus();
    fr.update();
    // Esc: the dialog goes, focus falls to the page.
    open.dialog = false;
    dialog.remove();
    expect(document.activeElement).toBe(document.body);
    fr.update();
    expect(document.activeElement).toBe(pane);
    expect(fallback).not.toHaveBeenCalled();
    stop();
  });

  it('leaves focus alone when the person moved it somewhere else, and falls back when the old place is gone', () => {
    const pane = el('<textarea></textarea>');
    const other = el('<button>elsewhere</button>');
    const open = { panel: false };
    const fallback = vi.fn();
    const fr = new FocusReturn([{ name: 'panel', open: () => open.panel, root: '[data-testid=panel]' }], fallback);
    fr.track();
    const panel = (shown: boolean) => {
      open.panel = shown;
      fr.update();
    };
    pane.focus();
    panel(true);
    other.focus();
    panel(false);
    expect(document.activeElement).toBe(other);

    // Opened again from the pane, which is then removed (its workspace closed): the fallback.
    pane.focus();
    panel(true);
    pane.remove();
    panel(false);
    expect(fallback).toHaveBeenCalledOnce();
  });

  it('hands the place on from the palette to the dialog its command opened, and focuses a dialog that took no focus', () => {
    const pane = el('<textarea></textarea>');
    const open = { palette: false, composer: false };
    const fr = new FocusReturn(
      [
        { name: 'palette', open: () => open.palette, root: '[data-testid=palette]' },
        { name: 'composer', open: () => open.composer, root: '[data-testid=composer]' },
      ],
      () => {},
    );
    fr.track();
    pane.focus();
    open.palette = true;
    const palette = el('<div data-testid="palette"><input /></div>');
    palette.querySelector('input')!.focus();
    fr.update();
    // Enter on a command: the palette goes, the composer comes without focusing anything.
    palette.remove();
    open.palette = false;
    open.composer = true;
    const composer = el('<div data-testid="composer" tabindex="-1"></div>');
    fr.update();
    expect(document.activeElement).toBe(composer);
    composer.remove();
    open.composer = false;
    fr.update();
    expect(document.activeElement).toBe(pane);
  });
});

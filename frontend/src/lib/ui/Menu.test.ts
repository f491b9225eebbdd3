// @vitest-environment jsdom
import { fireEvent, render, screen } from '@testing-library/svelte';
import { createRawSnippet } from 'svelte';
import { describe, expect, it, vi } from 'vitest';
import Menu from './Menu.svelte';

const html = (s: string) => createRawSnippet(() => ({ render: () => s }));

function setup(onescape?: () => boolean) {
  const onopen = vi.fn();
  render(Menu, {
    label: 'Things',
    testid: 'things',
    buttonTestid: 'things-button',
    buttonTitle: 'Things',
    width: 200,
    onopen,
    onescape,
    button: html('<span>▾</span>'),
    children: html(
      '<div><button type="button" role="menuitem">One</button><button type="button" role="menuitem" disabled>Off</button><button type="button" role="menuitem">Two</button><button type="button" role="menuitem">Three</button></div>',
    ),
  });
  const button = screen.getByTestId('things-button');
  const focused = () => document.activeElement?.textContent;
  const key = (key: string) => fireEvent.keyDown(screen.getByTestId('things'), { key });
  return { button, focused, key, onopen };
}

describe('Menu', () => {
  it('opens on its button with the first item focused, and the arrows, Home and End move through the enabled items', async () => {
    const { button, focused, key, onopen } = setup();
    expect(button.getAttribute('aria-expanded')).toBe('false');
    await fireEvent.click(button);
    expect(onopen).toHaveBeenCalledOnce();
    expect(button.getAttribute('aria-expanded')).toBe('true');
    expect(screen.getByTestId('things').getAttribute('role')).toBe('menu');
    expect(focused()).toBe('One');
    await key('ArrowDown');
    expect(focused()).toBe('Two'); // the disabled one is passed over
    await key('ArrowDown');
    await key('ArrowDown');
    expect(focused()).toBe('One'); // round from the end
    await key('ArrowUp');
    expect(focused()).toBe('Three');
    await key('Home');
    expect(focused()).toBe('One');
    await key('End');
    expect(focused()).toBe('Three');
  });

  it('closes on Esc and gives the focus back to the button that opened it', async () => {
    const { button, key } = setup();
    await fireEvent.click(button);
    await key('Escape');
    expect(screen.queryByTestId('things')).toBeNull();
    expect(document.activeElement).toBe(button);
  });

  it('lets the owner take Esc first (a sub-view closes, the menu stays)', async () => {
    let sub = true;
    const { button, key } = setup(() => {
      const had = sub;
      sub = false;
      return had;
    });
    await fireEvent.click(button);
    await key('Escape');
    expect(screen.getByTestId('things')).toBeTruthy();
    await key('Escape');
    expect(screen.queryByTestId('things')).toBeNull();
  });

  it('closes on a press elsewhere, not on one in a dialog', async () => {
    const { button } = setup();
    await fireEvent.click(button);
    const dialog = document.body.appendChild(Object.assign(document.createElement('div'), { role: 'dialog' }));
    dialog.setAttribute('role', 'dialog');
    await fireEvent.pointerDown(dialog);
    expect(screen.getByTestId('things')).toBeTruthy();
    await fireEvent.pointerDown(document.body);
    expect(screen.queryByTestId('things')).toBeNull();
    dialog.remove();
  });
});

// @vitest-environment jsdom
import { afterEach, describe, expect, it } from 'vitest';
import { holdFocus } from './holdFocus';

const tick = () => new Promise((r) => setTimeout(r, 0));

function dialog(): { panel: HTMLElement; inner: HTMLElement; button: (name: string) => HTMLButtonElement } {
  const panel = document.createElement('div');
  panel.setAttribute('role', 'dialog');
  panel.setAttribute('aria-modal', 'true');
  panel.tabIndex = -1;
  const inner = document.createElement('div');
  panel.append(inner);
  document.body.append(panel);
  const button = (name: string) => {
    const b = document.createElement('button');
    b.textContent = name;
    inner.append(b);
    return b;
  };
  return { panel, inner, button };
}

afterEach(() => {
  document.body.innerHTML = '';
});

describe('holdFocus', () => {
  it('brings the focus back into the dialog when the focused control goes, and to the opener on close', async () => {
    const opener = document.createElement('button');
    document.body.append(opener);
    opener.focus();
    const { panel, inner, button } = dialog();
    const tab = button('Providers');
    const save = button('Save');
    const release = holdFocus(opener)(inner) as () => void;

    tab.focus();
    save.focus();
    save.remove(); // Save closed the form it was in
    await tick();
    expect(document.activeElement).toBe(panel);

    tab.focus();
    button('Other').remove(); // an unrelated change leaves the focus where it is
    await tick();
    expect(document.activeElement).toBe(tab);

    release();
    expect(document.activeElement).toBe(opener);
  });

  it('goes back to the last focused control that is still there', async () => {
    const { inner, button } = dialog();
    const tab = button('Providers');
    holdFocus(null)(inner);
    tab.focus();
    (document.activeElement as HTMLElement).blur();
    button('x'); // any change in the page
    await tick();
    expect(document.activeElement).toBe(tab);
  });

  it('leaves a confirmation opened over the dialog alone', async () => {
    const { inner, button } = dialog();
    button('Delete').focus();
    holdFocus(null)(inner);
    const confirm = dialog();
    const ok = confirm.button('OK');
    ok.focus();
    ok.remove();
    await tick();
    expect(document.activeElement).toBe(document.body);
  });
});

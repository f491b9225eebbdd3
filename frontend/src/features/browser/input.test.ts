import { describe, expect, it } from 'vitest';
import { buttonName, isPasteKey, keyInput, modifiers, textInput, wheelPixels, WHEEL_LINE_PX } from './input';

const key = (key: string, over: Partial<KeyboardEvent> = {}) => ({
  key,
  code: '',
  ctrlKey: false,
  altKey: false,
  metaKey: false,
  shiftKey: false,
  isComposing: false,
  ...over,
});

describe('keyInput', () => {
  it('sends printable and named keys as key events with their code', () => {
    expect(keyInput(key('a', { code: 'KeyA' }), 'keydown')).toEqual({ type: 'keydown', key: 'a', code: 'KeyA' });
    expect(keyInput(key('A', { code: 'KeyA', shiftKey: true }), 'keydown')).toEqual({ type: 'keydown', key: 'A', code: 'KeyA', shift: true });
    expect(keyInput(key('Enter', { code: 'Enter' }), 'keyup')).toEqual({ type: 'keyup', key: 'Enter', code: 'Enter' });
    expect(keyInput(key('é', { code: 'Digit2' }), 'keydown')).toEqual({ type: 'keydown', key: 'é', code: 'Digit2' });
  });

  it('carries shortcuts with their modifiers', () => {
    expect(keyInput(key('a', { code: 'KeyA', ctrlKey: true }), 'keydown')).toEqual({ type: 'keydown', key: 'a', code: 'KeyA', ctrl: true });
    expect(keyInput(key('ArrowLeft', { code: 'ArrowLeft', altKey: true, metaKey: true }), 'keydown')).toMatchObject({ alt: true, meta: true });
  });

  it('types an AltGr character (Ctrl+Alt on Windows) as text', () => {
    expect(keyInput(key('@', { code: 'KeyQ', ctrlKey: true, altKey: true }), 'keydown')).toEqual({ type: 'text', text: '@' });
    expect(keyInput(key('@', { code: 'KeyQ', ctrlKey: true, altKey: true }), 'keyup')).toBeNull();
  });

  it('sends nothing for dead keys, IME composition and unidentified keys', () => {
    expect(keyInput(key('Dead', { code: 'BracketLeft' }), 'keydown')).toBeNull();
    expect(keyInput(key('Process'), 'keydown')).toBeNull();
    expect(keyInput(key('Unidentified'), 'keydown')).toBeNull();
    expect(keyInput(key('AltGraph'), 'keydown')).toBeNull();
    expect(keyInput(key('a', { isComposing: true }), 'keydown')).toBeNull();
  });
});

describe('isPasteKey', () => {
  it('knows the paste chords', () => {
    expect(isPasteKey(key('v', { ctrlKey: true }))).toBe(true);
    expect(isPasteKey(key('V', { ctrlKey: true, shiftKey: true }))).toBe(true);
    expect(isPasteKey(key('v', { metaKey: true }))).toBe(true);
    expect(isPasteKey(key('Insert', { shiftKey: true }))).toBe(true);
    expect(isPasteKey(key('v'))).toBe(false);
    expect(isPasteKey(key('c', { ctrlKey: true }))).toBe(false);
  });
});

describe('mouse and wheel', () => {
  it('names the three buttons the backend knows', () => {
    expect([0, 1, 2, 3].map(buttonName)).toEqual(['left', 'middle', 'right', null]);
  });

  it('lists only the modifiers held', () => {
    expect(modifiers({ ctrlKey: false, altKey: false, metaKey: false, shiftKey: false })).toEqual({});
    expect(modifiers({ ctrlKey: true, altKey: false, metaKey: false, shiftKey: true })).toEqual({ ctrl: true, shift: true });
  });

  it('turns wheel lines and pages into pixels', () => {
    expect(wheelPixels({ deltaX: 0, deltaY: 120, deltaMode: 0 }, 600)).toEqual({ deltaX: 0, deltaY: 120 });
    expect(wheelPixels({ deltaX: 1, deltaY: 3, deltaMode: 1 }, 600)).toEqual({ deltaX: WHEEL_LINE_PX, deltaY: 3 * WHEEL_LINE_PX });
    expect(wheelPixels({ deltaX: 0, deltaY: -1, deltaMode: 2 }, 600)).toEqual({ deltaX: 0, deltaY: -600 });
  });

  it('sends pasted text as text, and nothing for none', () => {
    expect(textInput('hello')).toEqual({ type: 'text', text: 'hello' });
    expect(textInput('')).toBeNull();
  });
});

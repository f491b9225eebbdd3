import { describe, expect, it } from 'vitest';
import {
  COMMAND,
  commandForKey,
  KEYMAP,
  parseChord,
  shortcutFor,
  switchCommand,
  TERMINAL_KEY,
  TERMINAL_KEYMAP,
  type KeyCondition,
  type KeyLike,
} from './keymap';

function key(k: string, mods: Partial<KeyLike> = {}, code = ''): KeyLike {
  return { key: k, code, ctrlKey: false, shiftKey: false, altKey: false, metaKey: false, ...mods };
}

describe('keymap', () => {
  it('tells Ctrl+Shift+P from Ctrl+P and plain P', () => {
    expect(commandForKey(key('P', { ctrlKey: true, shiftKey: true }, 'KeyP'))).toBe(COMMAND.togglePalette);
    expect(commandForKey(key('p', { ctrlKey: true }, 'KeyP'))).toBeUndefined();
    expect(commandForKey(key('P', { shiftKey: true }, 'KeyP'))).toBeUndefined();
    expect(commandForKey(key('P', { ctrlKey: true, shiftKey: true, altKey: true }, 'KeyP'))).toBeUndefined();
  });

  it('maps Ctrl+1…9 to the Nth workspace and nothing else to digits', () => {
    for (let n = 1; n <= 9; n++) {
      expect(commandForKey(key(String(n), { ctrlKey: true }, `Digit${n}`))).toBe(switchCommand(n));
    }
    expect(commandForKey(key('0', { ctrlKey: true }, 'Digit0'))).toBeUndefined();
    expect(commandForKey(key('1', {}, 'Digit1'))).toBeUndefined();
    expect(commandForKey(key('1', { ctrlKey: true, shiftKey: true }, 'Digit1'))).toBeUndefined();
  });

  it('uses the physical digit key on layouts where the digit row types symbols', () => {
    // AZERTY: the key left of "2" types "&" without Shift.
    expect(commandForKey(key('&', { ctrlKey: true }, 'Digit1'))).toBe(switchCommand(1));
  });

  it('tells Ctrl+Tab from Ctrl+Shift+Tab', () => {
    expect(commandForKey(key('Tab', { ctrlKey: true }, 'Tab'))).toBe(COMMAND.nextWorkspace);
    expect(commandForKey(key('Tab', { ctrlKey: true, shiftKey: true }, 'Tab'))).toBe(COMMAND.previousWorkspace);
  });

  it('matches Ctrl+T and Ctrl+W', () => {
    expect(commandForKey(key('t', { ctrlKey: true }, 'KeyT'))).toBe(COMMAND.newWorkspace);
    expect(commandForKey(key('w', { ctrlKey: true }, 'KeyW'))).toBe(COMMAND.closeWorkspace);
    expect(commandForKey(key('w', { metaKey: true }, 'KeyW'))).toBeUndefined();
  });

  it('opens Settings on Ctrl+, (the comma key has no letter or digit code)', () => {
    expect(commandForKey(key(',', { ctrlKey: true }, 'Comma'))).toBe(COMMAND.openSettings);
    expect(commandForKey(key(',', {}, 'Comma'))).toBeUndefined();
    expect(shortcutFor(COMMAND.openSettings)).toBe('Ctrl+,');
  });

  it('shows the same shortcut the listener uses', () => {
    expect(shortcutFor(COMMAND.togglePalette)).toBe('Ctrl+Shift+P');
    expect(shortcutFor(switchCommand(3))).toBe('Ctrl+3');
    expect(shortcutFor(switchCommand(10))).toBeUndefined();
    expect(shortcutFor(COMMAND.renameWorkspace)).toBeUndefined();
  });

  it('has no two bindings on the same keys', () => {
    const keys = KEYMAP.map((b) => JSON.stringify(parseChord(b.keys)));
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('refuses a binding with no key', () => {
    expect(() => parseChord('Ctrl+Shift')).toThrow(/names no key/);
  });

  it('restarts with Ctrl+R only in a focused terminal whose shell exited, so it stays reverse search and reload otherwise', () => {
    const ctrlR = key('r', { ctrlKey: true }, 'KeyR');
    const only = (c: KeyCondition) => (x: KeyCondition) => x === c || (c === 'terminalExited' && x === 'terminalFocused');
    expect(commandForKey(ctrlR, KEYMAP, only('terminalExited'))).toBe(COMMAND.restartTerminal);
    expect(commandForKey(ctrlR, KEYMAP, only('terminalFocused'))).toBeUndefined();
    expect(commandForKey(ctrlR)).toBeUndefined();
    expect(shortcutFor(COMMAND.restartTerminal)).toBe('Ctrl+R');
  });

  it('toggles broadcast with Ctrl+B when a terminal pane has focus', () => {
    const ctrlB = key('b', { ctrlKey: true }, 'KeyB');
    expect(commandForKey(ctrlB, KEYMAP, (c) => c === 'terminalFocused')).toBe(COMMAND.toggleBroadcast);
    expect(commandForKey(ctrlB, KEYMAP, () => false)).toBeUndefined();
    expect(shortcutFor(COMMAND.toggleBroadcast)).toBe('Ctrl+B');
  });

  it("lists the terminal's own keys apart, on keys no app shortcut uses", () => {
    expect(commandForKey(key('C', { ctrlKey: true, shiftKey: true }, 'KeyC'), TERMINAL_KEYMAP)).toBe(TERMINAL_KEY.copy);
    expect(commandForKey(key('V', { ctrlKey: true, shiftKey: true }, 'KeyV'), TERMINAL_KEYMAP)).toBe(TERMINAL_KEY.paste);
    expect(commandForKey(key('F', { ctrlKey: true, shiftKey: true }, 'KeyF'), TERMINAL_KEYMAP)).toBe(TERMINAL_KEY.find);
    // Plain Ctrl+C is the shell's interrupt and must reach it.
    expect(commandForKey(key('c', { ctrlKey: true }, 'KeyC'), TERMINAL_KEYMAP)).toBeUndefined();
    expect(commandForKey(key('c', { ctrlKey: true }, 'KeyC'), KEYMAP, () => true)).toBeUndefined();
    const app = new Set(KEYMAP.map((b) => JSON.stringify(parseChord(b.keys))));
    expect(TERMINAL_KEYMAP.filter((b) => app.has(JSON.stringify(parseChord(b.keys))))).toEqual([]);
  });

  it('maximizes with Ctrl+Enter and moves pane focus with Alt+Arrow only in the pane area, so the chat keeps Ctrl+Enter', () => {
    const inPanes = (c: KeyCondition) => c === 'paneArea';
    const ctrlEnter = key('Enter', { ctrlKey: true }, 'Enter');
    expect(commandForKey(ctrlEnter, KEYMAP, inPanes)).toBe(COMMAND.toggleMaximizePane);
    expect(commandForKey(ctrlEnter, KEYMAP, () => false)).toBeUndefined();
    expect(commandForKey(key('Enter', {}, 'Enter'), KEYMAP, inPanes)).toBeUndefined();
    const arrows: Array<[string, string]> = [
      ['ArrowLeft', COMMAND.focusPaneLeft],
      ['ArrowRight', COMMAND.focusPaneRight],
      ['ArrowUp', COMMAND.focusPaneUp],
      ['ArrowDown', COMMAND.focusPaneDown],
    ];
    for (const [k, command] of arrows) {
      expect(commandForKey(key(k, { altKey: true }, k), KEYMAP, inPanes)).toBe(command);
      expect(commandForKey(key(k, { altKey: true }, k), KEYMAP, () => false)).toBeUndefined();
      expect(commandForKey(key(k, {}, k), KEYMAP, inPanes)).toBeUndefined();
    }
    expect(shortcutFor(COMMAND.toggleMaximizePane)).toBe('Ctrl+Enter');
    expect(shortcutFor(COMMAND.focusPaneLeft)).toBe('Alt+ArrowLeft');
  });

  it('opens a new goal with Ctrl+Shift+G (the goal the focused pane gets) and the Goal Dashboard with Ctrl+Shift+D', () => {
    expect(commandForKey(key('G', { ctrlKey: true, shiftKey: true }, 'KeyG'))).toBe(COMMAND.newGoal);
    expect(commandForKey(key('D', { ctrlKey: true, shiftKey: true }, 'KeyD'))).toBe(COMMAND.toggleGoals);
    expect(shortcutFor(COMMAND.newGoal)).toBe('Ctrl+Shift+G');
    expect(shortcutFor(COMMAND.toggleGoals)).toBe('Ctrl+Shift+D');
  });
});

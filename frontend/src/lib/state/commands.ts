import { shortcutFor, type KeyBinding, KEYMAP } from './keymap';

/** Something the user can run from the palette, and maybe from a shortcut in KEYMAP. */
export interface Command {
  id: string;
  title: string;
  run: () => void | Promise<void>;
}

export interface CommandWithShortcut extends Command {
  shortcut?: string;
}

export function withShortcuts(
  commands: readonly Command[],
  keymap: readonly KeyBinding[] = KEYMAP,
): CommandWithShortcut[] {
  return commands.map((c) => ({ ...c, shortcut: shortcutFor(c.id, keymap) }));
}

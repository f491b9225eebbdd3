// The one keymap: the global key listener and the shortcuts shown in the command palette both
// read this table, so they cannot disagree.

export interface KeyBinding {
  /** Written the way it is shown, e.g. "Ctrl+Shift+P". */
  keys: string;
  command: string;
}

/** How many workspaces get a Ctrl+digit shortcut. */
export const NUMBERED_WORKSPACES = 9;

export const COMMAND = {
  newWorkspace: 'workspace.new',
  closeWorkspace: 'workspace.close',
  renameWorkspace: 'workspace.rename',
  nextWorkspace: 'workspace.next',
  previousWorkspace: 'workspace.previous',
  exportWorkspace: 'workspace.export',
  importWorkspace: 'workspace.import',
  togglePalette: 'palette.toggle',
  openSettings: 'settings.open',
} as const;

/** Command id for switching to the Nth workspace (1-based). */
export function switchCommand(n: number): string {
  return `workspace.switch.${n}`;
}

export const KEYMAP: readonly KeyBinding[] = [
  { keys: 'Ctrl+T', command: COMMAND.newWorkspace },
  { keys: 'Ctrl+W', command: COMMAND.closeWorkspace },
  { keys: 'Ctrl+Tab', command: COMMAND.nextWorkspace },
  { keys: 'Ctrl+Shift+Tab', command: COMMAND.previousWorkspace },
  { keys: 'Ctrl+Shift+P', command: COMMAND.togglePalette },
  { keys: 'Ctrl+,', command: COMMAND.openSettings },
  ...Array.from({ length: NUMBERED_WORKSPACES }, (_, i) => ({
    keys: `Ctrl+${i + 1}`,
    command: switchCommand(i + 1),
  })),
];

export interface Chord {
  ctrl: boolean;
  shift: boolean;
  alt: boolean;
  meta: boolean;
  /** Lower-case key name: "p", "1", "tab". */
  key: string;
}

export type KeyLike = Pick<KeyboardEvent, 'key' | 'code' | 'ctrlKey' | 'shiftKey' | 'altKey' | 'metaKey'>;

export function parseChord(keys: string): Chord {
  const chord: Chord = { ctrl: false, shift: false, alt: false, meta: false, key: '' };
  for (const part of keys.split('+')) {
    const p = part.trim().toLowerCase();
    if (p === 'ctrl') chord.ctrl = true;
    else if (p === 'shift') chord.shift = true;
    else if (p === 'alt') chord.alt = true;
    else if (p === 'meta' || p === 'cmd') chord.meta = true;
    else chord.key = p;
  }
  if (!chord.key) throw new Error(`key binding "${keys}" names no key besides modifiers`);
  return chord;
}

/**
 * The key an event stands for. Letters follow the layout (e.key) so Ctrl+P is where the user's P
 * is; digits follow the physical key (e.code) because on layouts such as AZERTY the digit row
 * types "&", "é", … without Shift.
 */
export function eventKey(e: KeyLike): string {
  const key = e.key.toLowerCase();
  if (/^[a-z]$/.test(key)) return key;
  if (/^Digit\d$/.test(e.code)) return e.code.slice(5);
  if (/^Key[A-Z]$/.test(e.code)) return e.code.slice(3).toLowerCase();
  return key;
}

export function matchesChord(e: KeyLike, chord: Chord): boolean {
  return (
    e.ctrlKey === chord.ctrl &&
    e.shiftKey === chord.shift &&
    e.altKey === chord.alt &&
    e.metaKey === chord.meta &&
    eventKey(e) === chord.key
  );
}

const parsed = new WeakMap<readonly KeyBinding[], Array<{ chord: Chord; command: string }>>();

function compiled(keymap: readonly KeyBinding[]) {
  let table = parsed.get(keymap);
  if (!table) {
    table = keymap.map((b) => ({ chord: parseChord(b.keys), command: b.command }));
    parsed.set(keymap, table);
  }
  return table;
}

/** The command bound to this key event, if any. */
export function commandForKey(e: KeyLike, keymap: readonly KeyBinding[] = KEYMAP): string | undefined {
  return compiled(keymap).find((b) => matchesChord(e, b.chord))?.command;
}

/** The shortcut shown next to a command, if it has one. */
export function shortcutFor(command: string, keymap: readonly KeyBinding[] = KEYMAP): string | undefined {
  return keymap.find((b) => b.command === command)?.keys;
}

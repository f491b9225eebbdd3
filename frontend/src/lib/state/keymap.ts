// The one keymap: the global key listener and the shortcuts shown in the command palette both
// read this table, so they cannot disagree.

/**
 * When a binding applies. Outside its condition the key is not the app's: it goes on to the
 * focused element (the shell, for Ctrl+R's reverse search) or the browser (Ctrl+R reloads).
 */
export type KeyCondition =
  /** Focus is in a terminal pane (its screen or its header). */
  | 'terminalFocused'
  /** Focus is in a terminal pane whose shown tab has exited. */
  | 'terminalExited'
  /**
   * Focus is in a pane (terminal, browser, their headers) or nowhere in particular: not in the
   * chat's input, a dialog or a panel, where Ctrl+Enter and Alt+Arrow keep their own meaning.
   */
  | 'paneArea';

export interface KeyBinding {
  /** Written the way it is shown, e.g. "Ctrl+Shift+P". */
  keys: string;
  command: string;
  when?: KeyCondition;
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
  restartTerminal: 'terminal.restart',
  toggleBroadcast: 'terminal.toggleBroadcast',
  newTerminalTab: 'terminal.newTab',
  connectSSH: 'terminal.connectSSH',
  toggleGoals: 'goals.toggle',
  newGoal: 'goals.new',
  toggleChat: 'chat.toggle',
  toggleMaximizePane: 'pane.toggleMaximize',
  focusPaneLeft: 'pane.focusLeft',
  focusPaneRight: 'pane.focusRight',
  focusPaneUp: 'pane.focusUp',
  focusPaneDown: 'pane.focusDown',
  convertPane: 'pane.convert',
  copyPaneId: 'pane.copyId',
  inboxNext: 'inbox.next',
  toggleInbox: 'inbox.toggle',
} as const;

/** Command id for starting the focused pane from a launch template. */
export function startAsCommand(templateId: string): string {
  return `pane.startAs.${templateId}`;
}

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
  // G for goal: a new one, for the focused pane. D for the dashboard of them all.
  { keys: 'Ctrl+Shift+G', command: COMMAND.newGoal },
  { keys: 'Ctrl+Shift+D', command: COMMAND.toggleGoals },
  { keys: 'Ctrl+Shift+A', command: COMMAND.toggleChat },
  // L for the list of what waits for you: each press goes to its next item. Not Ctrl+Shift+I
  // or J (a browser's developer tools) nor N (a browser's private window).
  { keys: 'Ctrl+Shift+L', command: COMMAND.inboxNext },
  // While the shell runs, Ctrl+R is its reverse history search; it restarts only an exited one
  // (the exit badge says so). The palette's "Restart Terminal" restarts a running one too.
  { keys: 'Ctrl+R', command: COMMAND.restartTerminal, when: 'terminalExited' },
  { keys: 'Ctrl+B', command: COMMAND.toggleBroadcast, when: 'terminalFocused' },
  { keys: 'Ctrl+Enter', command: COMMAND.toggleMaximizePane, when: 'paneArea' },
  { keys: 'Alt+ArrowLeft', command: COMMAND.focusPaneLeft, when: 'paneArea' },
  { keys: 'Alt+ArrowRight', command: COMMAND.focusPaneRight, when: 'paneArea' },
  { keys: 'Alt+ArrowUp', command: COMMAND.focusPaneUp, when: 'paneArea' },
  { keys: 'Alt+ArrowDown', command: COMMAND.focusPaneDown, when: 'paneArea' },
  ...Array.from({ length: NUMBERED_WORKSPACES }, (_, i) => ({
    keys: `Ctrl+${i + 1}`,
    command: switchCommand(i + 1),
  })),
];

/**
 * Keys a focused terminal handles itself, before xterm turns them into input. Not app commands
 * (the global listener never sees them as such), but listed here so every binding is in one file.
 */
export const TERMINAL_KEY = {
  copy: 'terminal.copy',
  paste: 'terminal.paste',
  find: 'terminal.find',
} as const;

export const TERMINAL_KEYMAP: readonly KeyBinding[] = [
  { keys: 'Ctrl+Shift+C', command: TERMINAL_KEY.copy },
  { keys: 'Ctrl+Shift+V', command: TERMINAL_KEY.paste },
  { keys: 'Ctrl+Shift+F', command: TERMINAL_KEY.find },
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

const parsed = new WeakMap<readonly KeyBinding[], Array<{ chord: Chord; command: string; when?: KeyCondition }>>();

function compiled(keymap: readonly KeyBinding[]) {
  let table = parsed.get(keymap);
  if (!table) {
    table = keymap.map((b) => ({ chord: parseChord(b.keys), command: b.command, when: b.when }));
    parsed.set(keymap, table);
  }
  return table;
}

/**
 * The command bound to this key event, if any. A binding with a condition counts only when
 * `holds` says the condition is met (without `holds`, never).
 */
export function commandForKey(
  e: KeyLike,
  keymap: readonly KeyBinding[] = KEYMAP,
  holds: (c: KeyCondition) => boolean = () => false,
): string | undefined {
  return compiled(keymap).find((b) => matchesChord(e, b.chord) && (!b.when || holds(b.when)))?.command;
}

/** The shortcut shown next to a command, if it has one. */
export function shortcutFor(command: string, keymap: readonly KeyBinding[] = KEYMAP): string | undefined {
  return keymap.find((b) => b.command === command)?.keys;
}

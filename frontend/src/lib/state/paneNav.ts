// Pure helpers for the pane controls: moving focus across the grid, reading a typed command
// line, and the question asked before converting a pane something runs in.
import type { Pane, PaneKind, Workspace } from '../api';

export type Direction = 'left' | 'right' | 'up' | 'down';

const STEP: Record<Direction, readonly [dRow: number, dCol: number]> = {
  left: [0, -1],
  right: [0, 1],
  up: [-1, 0],
  down: [1, 0],
};

/**
 * The pane next to `fromId` in that direction; undefined at the grid's edge (focus does not wrap).
 * With no pane to start from (none focused yet, or one that is gone), the first pane in reading
 * order, so the keys always land somewhere.
 */
export function neighbourPane(ws: Workspace, fromId: string, dir: Direction): Pane | undefined {
  const from = ws.panes.find((p) => p.id === fromId);
  if (!from) return readingOrder(ws.panes)[0];
  const [dr, dc] = STEP[dir];
  return ws.panes.find((p) => p.row === from.row + dr && p.col === from.col + dc);
}

/** Panes row by row, then column by column. */
export function readingOrder(panes: readonly Pane[]): Pane[] {
  return panes.slice().sort((a, b) => a.row - b.row || a.col - b.col);
}

/**
 * Splits a command line as a shell would split simple words: blanks separate, single quotes keep
 * everything literal, double quotes keep blanks, a backslash escapes the next character. No
 * expansion of any kind. Throws on an unterminated quote, naming it.
 */
export function splitCommandLine(line: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let quote: "'" | '"' | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote) {
      if (c === quote) quote = null;
      else if (c === '\\' && quote === '"' && i + 1 < line.length && '"\\$`'.includes(line[i + 1])) word += line[++i];
      else word += c;
      continue;
    }
    if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
    } else if (c === '\\' && i + 1 < line.length) {
      word += line[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (quote) throw new Error(`The command has an unclosed ${quote === '"' ? 'double' : 'single'} quote: close it, or remove it`);
  if (inWord) words.push(word);
  return words;
}

const KIND_WORD: Record<PaneKind, string> = { terminal: 'a terminal', browser: 'a browser' };

/**
 * The question before converting a pane in which something runs. `busy` is what the backend
 * said runs; when the transport could not say (the desktop passes only the error's text), the
 * backend's own sentence stands in.
 */
export function convertQuestion(kind: PaneKind, busy: readonly string[] | undefined, message: string): string {
  const ends = `Converting it to ${KIND_WORD[kind]} pane ends`;
  if (busy && busy.length > 0) {
    const names = busy.map((b) => `"${b}"`);
    const list = names.length === 1 ? names[0] : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`;
    const verb = busy.length === 1 ? 'is' : 'are';
    return `${list} ${verb} running in this pane. ${ends} ${busy.length === 1 ? 'it' : 'them'}. Convert anyway?`;
  }
  const said = message.replace(/^force: /, '').trim();
  return `${said ? `${said.replace(/[.!]?$/, '.')} ` : 'Something is running in this pane. '}${ends} what runs. Convert anyway?`;
}

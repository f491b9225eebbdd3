// Draws a unified diff (git's format) with diff2html, unified or side by side, its code coloured
// by highlight.js, then marks every line number as a control that opens a comment on its line.
// diff2html's base UI takes the highlight.js instance it is given: the core with the languages
// the chat registers too (shared in the bundle), not all of highlight.js's 190.
import { Diff2HtmlUI } from 'diff2html/lib-esm/ui/js/diff2html-ui-base';
import { parse } from 'diff2html/lib-esm/diff2html';
import { ColorSchemeType, type DiffFile } from 'diff2html/lib-esm/types';
import 'diff2html/bundles/css/diff2html.min.css';
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import css from 'highlight.js/lib/languages/css';
import go from 'highlight.js/lib/languages/go';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import plaintext from 'highlight.js/lib/languages/plaintext';
import python from 'highlight.js/lib/languages/python';
import sql from 'highlight.js/lib/languages/sql';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';
import type { CommentSide } from '../../lib/api';
import { lineKey, type DiffFormat } from './review.svelte';

const LANGUAGES = { bash, css, go, javascript, json, plaintext, python, sql, typescript, xml, yaml };
for (const [name, lang] of Object.entries(LANGUAGES)) hljs.registerLanguage(name, lang);

/** A line of a file in the drawn diff that a comment can be on. */
export interface DiffLine {
  file: string;
  side: CommentSide;
  line: number;
  /** The row it is drawn in (a table row of diff2html's). */
  row: HTMLTableRowElement;
  /** The row's other number (a context line's old number in the unified view), for matching. */
  alsoOld?: number;
}

/** The path a file is reviewed under: its new name, or its old one once deleted. */
export function filePath(f: DiffFile): string {
  const name = f.isDeleted || f.newName === '/dev/null' ? f.oldName : f.newName;
  return name.replace(/^[ab]\//, '');
}

/**
 * Draws the patch into `target` and returns its lines. Each line number becomes a button
 * (Enter opens its comment box as a click does) carrying data-line-key for the caller.
 */
export function drawDiff(target: HTMLElement, patch: string, format: DiffFormat): DiffLine[] {
  const files = parse(patch);
  const ui = new Diff2HtmlUI(
    target,
    files,
    {
      outputFormat: format,
      drawFileList: false,
      matching: 'lines',
      colorScheme: ColorSchemeType.LIGHT, // its light variables, which the view maps to the app's palette
      highlight: true,
      synchronisedScroll: true,
      fileListToggle: false,
      fileContentToggle: false,
      stickyFileHeaders: false,
      smartSelection: false,
    },
    hljs as never,
  );
  ui.draw();
  const wrappers = [...target.querySelectorAll<HTMLElement>('.d2h-file-wrapper')];
  const lines: DiffLine[] = [];
  wrappers.forEach((w, i) => {
    const file = files[i] ? filePath(files[i]) : '';
    w.dataset.file = file;
    lines.push(...(format === 'side-by-side' ? sideLines(w, file) : unifiedLines(w, file)));
  });
  for (const l of lines) markNumber(l);
  return lines;
}

const num = (el: Element | null): number => Number(el?.textContent?.trim() || 0);

function unifiedLines(wrapper: HTMLElement, file: string): DiffLine[] {
  const out: DiffLine[] = [];
  for (const row of wrapper.querySelectorAll<HTMLTableRowElement>('tbody tr')) {
    const cell = row.querySelector('td.d2h-code-linenumber');
    if (!cell || cell.classList.contains('d2h-info')) continue;
    const oldN = num(cell.querySelector('.line-num1'));
    const newN = num(cell.querySelector('.line-num2'));
    if (cell.classList.contains('d2h-del') || !newN) {
      if (oldN) out.push({ file, side: 'old', line: oldN, row });
    } else out.push({ file, side: 'new', line: newN, row, ...(oldN ? { alsoOld: oldN } : {}) });
  }
  return out;
}

function sideLines(wrapper: HTMLElement, file: string): DiffLine[] {
  const out: DiffLine[] = [];
  const [left, right] = wrapper.querySelectorAll('.d2h-file-side-diff');
  for (const [side, half] of [['old', left], ['new', right]] as const) {
    if (!half) continue;
    for (const row of half.querySelectorAll<HTMLTableRowElement>('tbody tr')) {
      const cell = row.querySelector('td.d2h-code-side-linenumber');
      if (!cell || cell.classList.contains('d2h-info') || cell.classList.contains('d2h-code-side-emptyplaceholder')) continue;
      const n = num(cell);
      if (n) out.push({ file, side, line: n, row });
    }
  }
  return out;
}

/**
 * Puts the line's number(s) into a button: a real control, so Tab reaches it and Enter or Space
 * opens the comment box as a click does.
 */
function markNumber(l: DiffLine) {
  const cell = l.row.querySelector<HTMLElement>('td.d2h-code-linenumber, td.d2h-code-side-linenumber');
  if (!cell || cell.querySelector('button')) return;
  const button = document.createElement('button');
  button.type = 'button';
  button.className = 'cs-line-number';
  button.dataset.lineKey = lineKey(l.file, l.side, l.line);
  button.dataset.testid = 'diff-line-number';
  button.append(...cell.childNodes);
  // Its name is the numbers it shows and what it does (a name without the numbers shown
  // would not match what a person using speech input sees).
  const what = document.createElement('span');
  what.className = 'visually-hidden';
  what.textContent = ` Comment on line ${l.line}${l.side === 'old' ? ' (old)' : ''} of ${l.file}`;
  button.append(what);
  cell.append(button);
}

/** The other half of a side-by-side file: where a spacer keeps the rows level. */
export function twinRow(row: HTMLTableRowElement): HTMLTableRowElement | null {
  const half = row.closest('.d2h-file-side-diff');
  const pair = half?.parentElement?.querySelectorAll('.d2h-file-side-diff');
  if (!half || !pair || pair.length !== 2) return null;
  const other = pair[0] === half ? pair[1] : pair[0];
  const idx = [...(row.parentElement?.children ?? [])].indexOf(row);
  return (other.querySelector('tbody')?.children[idx] as HTMLTableRowElement | undefined) ?? null;
}

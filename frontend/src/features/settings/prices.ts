// The price table editor's state as pure functions: rows of strings as typed, and the table they
// make when saved.
import type { PriceTable } from '../../lib/api';

/** One editable row; prices are USD per million tokens, as typed. */
export interface PriceRow {
  /** Stable identity for the list while models are renamed. */
  key: number;
  model: string;
  input: string;
  output: string;
  /** Input read from the prompt cache; blank: the input price. */
  cached: string;
  /** Input written to the prompt cache; blank: the input price. */
  write: string;
}

let nextKey = 1;

export function newRow(model = '', input = '', output = '', cached = '', write = ''): PriceRow {
  return { key: nextKey++, model, input, output, cached, write };
}

/** An optional price as typed: 0 or absent shows blank. */
function optional(n: number | undefined): string {
  return n ? String(n) : '';
}

/** The table as rows, sorted by model so the order does not depend on the JSON. */
export function rowsFromTable(table: PriceTable): PriceRow[] {
  return Object.keys(table)
    .sort((a, b) => a.localeCompare(b))
    .map((model) => {
      const p = table[model];
      return newRow(model, String(p.inputPerMTok), String(p.outputPerMTok), optional(p.cachedInputPerMTok), optional(p.cacheWritePerMTok));
    });
}

/** A row left as "Add row" made it: it saves nothing. */
export function isBlankRow(row: PriceRow): boolean {
  return !row.model.trim() && !row.input.trim() && !row.output.trim() && !row.cached.trim() && !row.write.trim();
}

export type TableResult = { ok: true; table: PriceTable } | { ok: false; message: string };

/**
 * The table to save. Entirely blank rows are skipped (an "Add row" left unused); a blank price
 * is 0 (free, as local models are; a blank cache price means the input price). Negative prices
 * are the backend's to refuse.
 */
export function tableFromRows(rows: readonly PriceRow[]): TableResult {
  const table: PriceTable = {};
  for (const [i, row] of rows.entries()) {
    if (isBlankRow(row)) continue;
    const model = row.model.trim();
    if (!model) return fail(`row ${i + 1} has prices but no model name: name the model or remove the row`);
    if (model in table) return fail(`${model} is listed twice: keep one row per model`);
    const input = parsePrice(row.input);
    const output = parsePrice(row.output);
    if (Number.isNaN(input)) return fail(`${model}: input price "${row.input.trim()}" is not a number such as 2.50`);
    if (Number.isNaN(output)) return fail(`${model}: output price "${row.output.trim()}" is not a number such as 10`);
    const cached = parsePrice(row.cached);
    const write = parsePrice(row.write);
    if (Number.isNaN(cached)) return fail(`${model}: cached input price "${row.cached.trim()}" is not a number such as 0.30`);
    if (Number.isNaN(write)) return fail(`${model}: cache write price "${row.write.trim()}" is not a number such as 3.75`);
    table[model] = { inputPerMTok: input, outputPerMTok: output, cachedInputPerMTok: cached, cacheWritePerMTok: write };
  }
  return { ok: true, table };
}

/** '' → 0; "$2.50" and "2,50" are understood; anything else → NaN. */
function parsePrice(s: string): number {
  const t = s.trim().replace(/^\$/, '').replace(',', '.');
  if (!t) return 0;
  return /^[+-]?(\d+\.?\d*|\.\d+)$/.test(t) ? Number(t) : NaN;
}

function fail(message: string): TableResult {
  return { ok: false, message: `prices: ${message}` };
}

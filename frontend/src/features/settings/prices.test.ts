import { describe, expect, it } from 'vitest';
import { newRow, rowsFromTable, tableFromRows } from './prices';

describe('price rows', () => {
  it('lists the table sorted by model, and saves it back unchanged', () => {
    const table = {
      'gpt-4o': { inputPerMTok: 2.5, outputPerMTok: 10, cachedInputPerMTok: 1.25, cacheWritePerMTok: 0 },
      'claude-sonnet-4-5': { inputPerMTok: 3, outputPerMTok: 15, cachedInputPerMTok: 0.3, cacheWritePerMTok: 3.75 },
    };
    const rows = rowsFromTable(table);
    expect(rows.map((r) => [r.model, r.input, r.output, r.cached, r.write])).toEqual([
      ['claude-sonnet-4-5', '3', '15', '0.3', '3.75'],
      ['gpt-4o', '2.5', '10', '1.25', ''],
    ]);
    expect(new Set(rows.map((r) => r.key)).size).toBe(2);
    expect(tableFromRows(rows)).toEqual({ ok: true, table });
  });

  it('skips blank rows, reads blank prices as free and understands "$2,50"', () => {
    const rows = [newRow(' llama3 ', '', ''), newRow(), newRow('gpt-4o-mini', '$0,15', '0.6')];
    expect(tableFromRows(rows)).toEqual({
      ok: true,
      table: {
        llama3: { inputPerMTok: 0, outputPerMTok: 0, cachedInputPerMTok: 0, cacheWritePerMTok: 0 },
        'gpt-4o-mini': { inputPerMTok: 0.15, outputPerMTok: 0.6, cachedInputPerMTok: 0, cacheWritePerMTok: 0 },
      },
    });
  });

  it('says which row is wrong and how to fix it', () => {
    expect(tableFromRows([newRow('', '1', '2')])).toEqual({
      ok: false,
      message: 'prices: row 1 has prices but no model name: name the model or remove the row',
    });
    expect(tableFromRows([newRow('m', '1', '1'), newRow(' m ', '2', '2')])).toMatchObject({
      ok: false,
      message: 'prices: m is listed twice: keep one row per model',
    });
    expect(tableFromRows([newRow('m', 'cheap', '1')])).toMatchObject({ ok: false, message: expect.stringMatching(/^prices: m: input price "cheap"/) });
    expect(tableFromRows([newRow('m', '1', '1e')])).toMatchObject({ ok: false, message: expect.stringMatching(/output price/) });
    expect(tableFromRows([newRow('m', '1', '1', 'tenth')])).toMatchObject({ ok: false, message: expect.stringMatching(/^prices: m: cached input price "tenth"/) });
    expect(tableFromRows([newRow('m', '1', '1', '', 'x')])).toMatchObject({ ok: false, message: expect.stringMatching(/cache write price "x"/) });
  });
});

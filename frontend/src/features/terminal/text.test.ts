import { describe, expect, it } from 'vitest';
import { bufferText, type BufferLike } from './text';

/** A buffer of lines as xterm holds them: padded to the width, some wrapped onto the next. */
function buffer(lines: Array<string | [string, 'wrapped']>, width = 10): BufferLike {
  const rows = lines.map((l) => (typeof l === 'string' ? { text: l, wrapped: false } : { text: l[0], wrapped: true }));
  return {
    length: rows.length,
    getLine: (y) =>
      rows[y] && {
        isWrapped: rows[y].wrapped,
        translateToString: (trimRight?: boolean) => (trimRight ? rows[y].text.trimEnd() : rows[y].text.padEnd(width)),
      },
  };
}

describe('bufferText', () => {
  it('joins lines with \\n, trims their right ends and drops the unused screen below', () => {
    expect(bufferText(buffer(['$ echo hello', 'hello   ', '$ ', '', '']))).toBe('$ echo hello\nhello\n$');
  });

  it('joins a wrapped line to the one before', () => {
    expect(bufferText(buffer(['$ echo abcd', 'efghij', ['klm', 'wrapped'], '$']))).toBe('$ echo abcd\nefghijklm\n$');
  });

  it('is empty for an empty buffer', () => {
    expect(bufferText(buffer([]))).toBe('');
    expect(bufferText(buffer(['', '']))).toBe('');
  });
});

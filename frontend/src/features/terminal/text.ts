// The plain text of a terminal's buffer, for tests and the e2e hook: what a person would copy.

/** The parts of xterm's IBuffer this needs, so it runs without xterm (and in unit tests). */
export interface BufferLike {
  readonly length: number;
  getLine(y: number): { readonly isWrapped: boolean; translateToString(trimRight?: boolean): string } | undefined;
}

/**
 * Every line of the buffer (scrollback and screen), right-trimmed and joined by "\n". A line
 * that xterm wrapped is joined to the one before without a newline, so text longer than the
 * terminal is wide reads as it was printed. Trailing empty lines (the unused screen) are left out.
 */
export function bufferText(buffer: BufferLike): string {
  const lines: string[] = [];
  for (let y = 0; y < buffer.length; y++) {
    const line = buffer.getLine(y);
    if (!line) continue;
    const text = line.translateToString(true);
    if (line.isWrapped && lines.length) lines[lines.length - 1] += text;
    else lines.push(text);
  }
  while (lines.length && lines[lines.length - 1] === '') lines.pop();
  return lines.join('\n');
}

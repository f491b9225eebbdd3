import { describe, expect, it } from 'vitest';
import { attachError, MAX_IMAGE_BYTES } from './attachments';

describe('attachError', () => {
  it('accepts the picture types vision models take, up to the size limit', () => {
    for (const type of ['image/png', 'image/jpeg', 'image/gif', 'image/webp']) {
      expect(attachError({ name: 'a', type, size: 1000 })).toBe('');
    }
    expect(attachError({ name: 'big.png', type: 'image/png', size: MAX_IMAGE_BYTES })).toBe('');
  });

  it('says why a file cannot be attached', () => {
    expect(attachError({ name: 'logo.svg', type: 'image/svg+xml', size: 10 })).toBe('logo.svg is not a PNG, JPEG, GIF or WebP picture');
    expect(attachError({ name: 'notes.txt', type: 'text/plain', size: 10 })).toContain('not a PNG');
    expect(attachError({ name: 'huge.png', type: 'image/png', size: MAX_IMAGE_BYTES + 1 })).toMatch(/^huge\.png is 5\.0 MB; pictures up to 5 MB/);
  });
});

// Turning a screencast frame (base64 JPEG) into something a canvas can draw.
import { base64ToBytes } from '../../lib/api';

/** A decoded frame: draw it, then close it when a newer one replaces it. */
export interface DecodedFrame {
  image: CanvasImageSource;
  width: number;
  height: number;
  close(): void;
}

/**
 * Decodes a JPEG. createImageBitmap decodes off the main thread where the browser has it;
 * an <img> is the fallback (older WebKitGTK).
 */
export async function decodeJpeg(base64: string): Promise<DecodedFrame> {
  if (typeof createImageBitmap === 'function') {
    const bytes = base64ToBytes(base64);
    const bitmap = await createImageBitmap(new Blob([bytes as BlobPart], { type: 'image/jpeg' }));
    return { image: bitmap, width: bitmap.width, height: bitmap.height, close: () => bitmap.close() };
  }
  const img = new Image();
  img.src = `data:image/jpeg;base64,${base64}`;
  await img.decode();
  return { image: img, width: img.naturalWidth, height: img.naturalHeight, close: () => {} };
}

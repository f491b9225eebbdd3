// Pictures attached to a chat message (file picker or paste), read into base64 for the backend.
import type { DraftImage } from '../../lib/state/chat.svelte';

/** What the backend and the vision models accept (llm.Image.ContentType). */
export const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'] as const;

/**
 * The largest picture attached as is: Anthropic refuses images over 5 MB, and a bigger one
 * would also ride along in every later request of the conversation.
 */
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;

/** Why a file cannot be attached, or '' if it can. */
export function attachError(file: { name: string; type: string; size: number }): string {
  if (!(IMAGE_TYPES as readonly string[]).includes(file.type)) {
    return `${file.name || 'The pasted item'} is not a PNG, JPEG, GIF or WebP picture`;
  }
  if (file.size > MAX_IMAGE_BYTES) {
    const mb = (file.size / 1024 / 1024).toFixed(1);
    return `${file.name || 'The pasted picture'} is ${mb} MB; pictures up to ${MAX_IMAGE_BYTES / 1024 / 1024} MB can be attached: make it smaller first`;
  }
  return '';
}

/** Reads a picture as base64, rejecting with a message a person can act on. */
export async function readImage(file: File): Promise<DraftImage> {
  const why = attachError(file);
  if (why) throw new Error(why);
  const data = await new Promise<string>((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).replace(/^data:[^,]*,/, ''));
    reader.onerror = () => reject(new Error(`Could not read ${file.name || 'the picture'}: ${reader.error?.message ?? 'unknown error'}`));
    reader.readAsDataURL(file);
  });
  return { mediaType: file.type, data, name: file.name || 'pasted picture' };
}

/** The picture files among pasted clipboard items. */
export function pastedImages(data: DataTransfer | null): File[] {
  if (!data) return [];
  const files: File[] = [];
  for (const item of data.items) {
    if (item.kind === 'file' && item.type.startsWith('image/')) {
      const f = item.getAsFile();
      if (f) files.push(f);
    }
  }
  return files;
}

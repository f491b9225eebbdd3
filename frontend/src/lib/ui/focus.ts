import type { Attachment } from 'svelte/attachments';

/** Focuses the element when it mounts (an attachment: `{@attach focusOnMount}`). */
export const focusOnMount: Attachment<HTMLElement> = (el) => {
  el.focus();
};

/** Focuses an input and selects its text, ready to be typed over. */
export const focusAndSelect: Attachment<HTMLInputElement> = (el) => {
  el.focus();
  el.select();
};

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

/**
 * Moves the element to the end of <body> while it is mounted, out of any container that would
 * clip it or contain its fixed position (pane headers are CSS containers, panes hide overflow).
 */
export const portal: Attachment<HTMLElement> = (el) => {
  document.body.appendChild(el);
  return () => el.remove();
};

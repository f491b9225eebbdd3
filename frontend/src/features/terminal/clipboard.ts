// Clipboard and links for terminals. The desktop window (WebKitGTK) has no reliable async
// Clipboard API, so the Wails runtime's own functions are used there.

/**
 * Puts text on the clipboard. Best effort: a browser may refuse (an insecure origin, no focus),
 * and a failed copy must not disturb the terminal.
 */
export async function writeClipboard(text: string): Promise<void> {
  if (!text) return;
  try {
    if (window.runtime?.ClipboardSetText) {
      await window.runtime.ClipboardSetText(text);
      return;
    }
    await navigator.clipboard?.writeText(text);
  } catch {
    // Best effort, see above.
  }
}

/**
 * The clipboard's text when this page must read it itself (the desktop window); null in a
 * browser, where the key's own paste event delivers the text to xterm without a permission prompt.
 */
export function readClipboardSelf(): Promise<string> | null {
  return window.runtime?.ClipboardGetText ? window.runtime.ClipboardGetText() : null;
}

/**
 * Opens a link in a new browser tab (the OS browser on the desktop): a link printed in a
 * terminal when no browser pane takes it (see features/browser/links.ts), or on Ctrl+click.
 */
export function openLink(uri: string): void {
  if (!/^(https?|ftp):\/\//i.test(uri)) return; // only web links, never javascript: or file:
  if (window.runtime?.BrowserOpenURL) {
    window.runtime.BrowserOpenURL(uri);
    return;
  }
  window.open(uri, '_blank', 'noopener,noreferrer');
}

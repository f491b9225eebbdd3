// How a browser tab is named in the tab strip and its URL shown in the URL bar.
import type { BrowserTab } from '../../lib/api';

/** A blank page shows an empty URL bar, ready to type into. */
export function displayUrl(url: string): string {
  return url === 'about:blank' ? '' : url;
}

/** The page title, else its host (or URL), else "New tab". */
export function tabLabel(t: Pick<BrowserTab, 'title' | 'url'>): string {
  if (t.title && t.title !== 'about:blank') return t.title;
  const url = displayUrl(t.url);
  if (!url) return 'New tab';
  try {
    return new URL(url).host || url;
  } catch {
    return url;
  }
}

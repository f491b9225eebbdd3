// Links clicked in a terminal open in a browser pane of the same workspace when there is one:
// the one nearest the terminal on the grid. Ctrl/Cmd+click keeps the old way (a new browser
// tab, or the OS browser on the desktop).
import type { Pane, Workspace } from '../../lib/api';
import type { AppContext } from '../../lib/state/context';

/** Only web links go to a pane, never javascript:, file: or the like. */
export function isWebLink(uri: string): boolean {
  return /^https?:\/\//i.test(uri);
}

/**
 * The browser pane of `ws` nearest to pane `fromId` (fewest rows plus columns away; ties go to
 * the one earlier in reading order). Without `fromId` in the workspace, the first browser pane.
 */
export function nearestBrowserPane(ws: Workspace | undefined, fromId: string): Pane | undefined {
  if (!ws) return undefined;
  const browsers = ws.panes
    .filter((p) => p.kind === 'browser')
    .sort((a, b) => a.row - b.row || a.col - b.col);
  const from = ws.panes.find((p) => p.id === fromId);
  if (!from) return browsers[0];
  let best: Pane | undefined;
  let bestDistance = Infinity;
  for (const p of browsers) {
    const d = Math.abs(p.row - from.row) + Math.abs(p.col - from.col);
    if (d < bestDistance) {
      best = p;
      bestDistance = d;
    }
  }
  return best;
}

/**
 * Opens a link from terminal pane `fromId` in the nearest browser pane of the active workspace.
 * False when it did not (not a web link, a modifier asked for the OS browser, or no browser
 * pane), for the caller to open it the old way.
 */
export function openInBrowserPane(
  ctx: Pick<AppContext, 'workspaces' | 'browsers'>,
  fromId: string,
  uri: string,
  mods: { ctrlKey: boolean; metaKey: boolean } = { ctrlKey: false, metaKey: false },
): boolean {
  if (mods.ctrlKey || mods.metaKey || !isWebLink(uri)) return false;
  const pane = nearestBrowserPane(ctx.workspaces.active, fromId);
  if (!pane) return false;
  void ctx.browsers.show(pane.id, uri);
  return true;
}

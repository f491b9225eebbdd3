import { describe, expect, it, vi } from 'vitest';
import type { Pane, PaneKind, Workspace } from '../../lib/api';
import type { AppContext } from '../../lib/state/context';
import { isWebLink, nearestBrowserPane, openInBrowserPane } from './links';

function pane(id: string, kind: PaneKind, row: number, col: number): Pane {
  return { id, kind, label: id, row, col };
}

function ws(panes: Pane[]): Workspace {
  return {
    id: 'w1',
    name: 'W',
    position: 0,
    rows: 3,
    cols: 3,
    rowWeights: [1, 1, 1],
    colWeights: [1, 1, 1],
    focusedPaneId: '',
    maximizedPaneId: '',
    panes,
    createdAt: '',
    updatedAt: '',
  };
}

describe('nearestBrowserPane', () => {
  const grid = ws([
    pane('t00', 'terminal', 0, 0),
    pane('b02', 'browser', 0, 2),
    pane('b20', 'browser', 2, 0),
    pane('t11', 'terminal', 1, 1),
    pane('b12', 'browser', 1, 2),
    pane('t22', 'terminal', 2, 2),
  ]);

  it('picks the browser pane fewest rows plus columns away', () => {
    expect(nearestBrowserPane(grid, 't11')?.id).toBe('b12');
    expect(nearestBrowserPane(grid, 't22')?.id).toBe('b12');
  });

  it('breaks ties in reading order', () => {
    // From 0,0: b02 and b20 are both 2 away.
    expect(nearestBrowserPane(grid, 't00')?.id).toBe('b02');
  });

  it('falls back to the first browser pane, and to none', () => {
    expect(nearestBrowserPane(grid, 'elsewhere')?.id).toBe('b02');
    expect(nearestBrowserPane(ws([pane('t', 'terminal', 0, 0)]), 't')).toBeUndefined();
    expect(nearestBrowserPane(undefined, 't')).toBeUndefined();
  });
});

describe('openInBrowserPane', () => {
  function ctx(panes: Pane[]) {
    const show = vi.fn(async () => {});
    const c = { workspaces: { active: ws(panes) }, browsers: { show } } as unknown as Pick<AppContext, 'workspaces' | 'browsers'>;
    return { c, show };
  }
  const plain = { ctrlKey: false, metaKey: false };

  it('shows a web link in the nearest browser pane', () => {
    const { c, show } = ctx([pane('t', 'terminal', 0, 0), pane('b', 'browser', 0, 1)]);
    expect(openInBrowserPane(c, 't', 'https://example.com/docs', plain)).toBe(true);
    expect(show).toHaveBeenCalledWith('b', 'https://example.com/docs');
  });

  it('leaves Ctrl/Cmd+click, non-web links and workspaces without a browser pane to the caller', () => {
    const { c, show } = ctx([pane('t', 'terminal', 0, 0), pane('b', 'browser', 0, 1)]);
    expect(openInBrowserPane(c, 't', 'https://example.com/', { ctrlKey: true, metaKey: false })).toBe(false);
    expect(openInBrowserPane(c, 't', 'https://example.com/', { ctrlKey: false, metaKey: true })).toBe(false);
    expect(openInBrowserPane(c, 't', 'ftp://example.com/', plain)).toBe(false);
    expect(show).not.toHaveBeenCalled();
    const none = ctx([pane('t', 'terminal', 0, 0)]);
    expect(openInBrowserPane(none.c, 't', 'https://example.com/', plain)).toBe(false);
  });

  it('knows web links', () => {
    expect(isWebLink('HTTP://x')).toBe(true);
    expect(isWebLink('javascript:alert(1)')).toBe(false);
  });
});

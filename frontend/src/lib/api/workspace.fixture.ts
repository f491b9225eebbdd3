import type { Pane, Workspace } from './types';

/** A pane of a test's workspace, without its place: rowWorkspace puts it. */
export type PaneSpec = Omit<Pane, 'row' | 'col'>;

/**
 * A workspace for tests: one row holding `panes` side by side in their order (an empty
 * workspace is one empty cell), nothing focused or maximized, last changed at the start of
 * 2025. `over` sets anything else.
 */
export function rowWorkspace(id: string, panes: PaneSpec[], over: Partial<Workspace> = {}): Workspace {
  return {
    id,
    name: `Workspace ${id}`,
    position: 0,
    rows: 1,
    cols: Math.max(1, panes.length),
    rowWeights: [1],
    colWeights: panes.length ? panes.map(() => 1) : [1],
    focusedPaneId: '',
    maximizedPaneId: '',
    panes: panes.map((p, i) => ({ ...p, row: 0, col: i })),
    createdAt: '2025-01-01T00:00:00Z',
    updatedAt: '2025-01-01T00:00:00Z',
    ...over,
  };
}

// Wire types: the exact JSON shapes the Go backend sends. Written once here; every transport and
// component uses these, so a change to the backend's JSON is a change to this one file.

export type PaneKind = 'terminal' | 'browser';

/** One cell of a workspace grid. row and col are 0-based. */
export interface Pane {
  id: string;
  kind: PaneKind;
  label: string;
  row: number;
  col: number;
}

/** A workspace: a rows×cols grid holding exactly rows*cols panes. Weights are CSS `fr` values. */
export interface Workspace {
  id: string;
  name: string;
  position: number;
  rows: number;
  cols: number;
  rowWeights: number[];
  colWeights: number[];
  panes: Pane[];
  createdAt: string;
  updatedAt: string;
}

/** All workspaces, ordered by position, and the one the user is looking at. */
export interface WorkspaceList {
  workspaces: Workspace[];
  activeId: string;
}

/**
 * Every backend change is pushed as an envelope. For topic 'workspaces' the data is the full
 * WorkspaceList snapshot after the change.
 */
export interface BackendEvent {
  topic: string;
  type: string;
  data: unknown;
}

export type WorkspaceEventType = 'created' | 'updated' | 'deleted' | 'activated' | 'imported';

/** State of the live event stream (web only; the desktop is always connected). */
export type ConnectionState = 'connected' | 'connecting' | 'disconnected';

export interface PanePatch {
  kind?: PaneKind;
  label?: string;
}

/** Grid bounds enforced by the backend; the UI offers exactly this range. */
export const MIN_GRID = 1;
export const MAX_GRID = 6;

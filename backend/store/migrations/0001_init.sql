-- Foundation: install-wide settings, workspaces and their panes.
CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE workspaces (
    id          TEXT PRIMARY KEY,
    name        TEXT    NOT NULL,
    position    INTEGER NOT NULL,
    grid_rows   INTEGER NOT NULL CHECK (grid_rows BETWEEN 1 AND 6),
    grid_cols   INTEGER NOT NULL CHECK (grid_cols BETWEEN 1 AND 6),
    row_weights TEXT    NOT NULL, -- JSON array of numbers, one per row
    col_weights TEXT    NOT NULL, -- JSON array of numbers, one per column
    created_at  INTEGER NOT NULL, -- unix milliseconds
    updated_at  INTEGER NOT NULL
);

CREATE TABLE panes (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT    NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    kind         TEXT    NOT NULL CHECK (kind IN ('terminal', 'browser')),
    label        TEXT    NOT NULL,
    grid_row     INTEGER NOT NULL,
    grid_col     INTEGER NOT NULL,
    UNIQUE (workspace_id, grid_row, grid_col)
);
CREATE INDEX panes_by_workspace ON panes(workspace_id);

package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/clusterspace/clusterspace/backend/workspace"
)

// ErrNotFound means the row asked for does not exist.
var ErrNotFound = errors.New("not found")

const activeWorkspaceKey = "workspace.active"

// ListWorkspaces returns every workspace with its panes, in tab order.
func (s *Store) ListWorkspaces(ctx context.Context) ([]workspace.Workspace, error) {
	out, err := queryAll(ctx, s.db, scanWorkspace, `SELECT `+workspaceColumns+` FROM workspaces ORDER BY position, created_at`)
	if err != nil {
		return nil, err
	}
	index := map[string]int{}
	for i, ws := range out {
		index[ws.ID] = i
	}
	panes, err := queryAll(ctx, s.db, scanPane, `SELECT `+paneColumns+` FROM panes ORDER BY grid_row, grid_col`)
	if err != nil {
		return nil, err
	}
	for _, p := range panes {
		if i, ok := index[p.workspaceID]; ok {
			out[i].Panes = append(out[i].Panes, p.Pane)
		}
	}
	return out, nil
}

// Workspace returns one workspace with its panes, or ErrNotFound.
func (s *Store) Workspace(ctx context.Context, id string) (workspace.Workspace, error) {
	ws, err := scanWorkspace(s.db.QueryRowContext(ctx, `SELECT `+workspaceColumns+` FROM workspaces WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return ws, fmt.Errorf("workspace %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return ws, err
	}
	panes, err := queryAll(ctx, s.db, scanPane, `SELECT `+paneColumns+` FROM panes WHERE workspace_id = ? ORDER BY grid_row, grid_col`, id)
	for _, p := range panes {
		ws.Panes = append(ws.Panes, p.Pane)
	}
	return ws, err
}

const workspaceColumns = `id, name, position, grid_rows, grid_cols, row_weights, col_weights, created_at, updated_at,
	focused_pane, maximized_pane`

func scanWorkspace(r scanner) (workspace.Workspace, error) {
	var ws workspace.Workspace
	var rowW, colW string
	var t stamps
	if err := r.Scan(&ws.ID, &ws.Name, &ws.Position, &ws.Rows, &ws.Cols, &rowW, &colW, &t.created, &t.updated,
		&ws.FocusedPaneID, &ws.MaximizedPaneID); err != nil {
		return ws, err
	}
	if err := json.Unmarshal([]byte(rowW), &ws.RowWeights); err != nil {
		return ws, fmt.Errorf("workspace %q: row weights: %w", ws.ID, err)
	}
	if err := json.Unmarshal([]byte(colW), &ws.ColWeights); err != nil {
		return ws, fmt.Errorf("workspace %q: col weights: %w", ws.ID, err)
	}
	ws.CreatedAt, ws.UpdatedAt = t.times()
	return ws, nil
}

// storedPane is a pane as read back, with the workspace it belongs to.
type storedPane struct {
	workspace.Pane
	workspaceID string
}

const paneColumns = `workspace_id, id, kind, label, grid_row, grid_col, launch`

// scanPane reads a row of paneColumns, decoding the pane's stored launch settings
// ("" for a plain shell).
func scanPane(r scanner) (storedPane, error) {
	var p storedPane
	var launch string
	if err := r.Scan(&p.workspaceID, &p.ID, &p.Kind, &p.Label, &p.Row, &p.Col, &launch); err != nil || launch == "" {
		return p, err
	}
	p.Launch = &workspace.Launch{}
	if err := json.Unmarshal([]byte(launch), p.Launch); err != nil {
		return p, fmt.Errorf("pane %q: launch settings: %w", p.ID, err)
	}
	return p, nil
}

// SaveWorkspace inserts or replaces a workspace and its panes in one transaction.
func (s *Store) SaveWorkspace(ctx context.Context, ws workspace.Workspace) error {
	weights, err := jsonTexts(ws.RowWeights, ws.ColWeights)
	if err != nil {
		return err
	}
	return s.inTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO workspaces(id, name, position, grid_rows, grid_cols, row_weights, col_weights, created_at, updated_at,
				focused_pane, maximized_pane)
			VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT(id) DO UPDATE SET name = excluded.name, position = excluded.position, grid_rows = excluded.grid_rows,
				grid_cols = excluded.grid_cols, row_weights = excluded.row_weights, col_weights = excluded.col_weights,
				updated_at = excluded.updated_at, focused_pane = excluded.focused_pane, maximized_pane = excluded.maximized_pane`,
			ws.ID, ws.Name, ws.Position, ws.Rows, ws.Cols, weights[0], weights[1], ws.CreatedAt.UnixMilli(), ws.UpdatedAt.UnixMilli(),
			ws.FocusedPaneID, ws.MaximizedPaneID)
		if err != nil {
			return fmt.Errorf("save workspace %q: %w", ws.ID, err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM panes WHERE workspace_id = ?`, ws.ID); err != nil {
			return err
		}
		for _, p := range ws.Panes {
			launch, err := optionalJSON(p.Launch)
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO panes(id, workspace_id, kind, label, grid_row, grid_col, launch) VALUES(?, ?, ?, ?, ?, ?, ?)`,
				p.ID, ws.ID, string(p.Kind), p.Label, p.Row, p.Col, launch); err != nil {
				return fmt.Errorf("save pane %q of workspace %q: %w", p.ID, ws.ID, err)
			}
		}
		return nil
	})
}

// DeleteWorkspace removes a workspace and its panes, or returns ErrNotFound.
func (s *Store) DeleteWorkspace(ctx context.Context, id string) error {
	return s.deleteOne(ctx, fmt.Errorf("workspace %q: %w", id, ErrNotFound), `DELETE FROM workspaces WHERE id = ?`, id)
}

// ActiveWorkspace returns the id of the workspace the user last had open ("" if none saved).
func (s *Store) ActiveWorkspace(ctx context.Context) (string, error) {
	v, _, err := s.Setting(ctx, activeWorkspaceKey)
	return v, err
}

// SetActiveWorkspace records the workspace the user has open.
func (s *Store) SetActiveWorkspace(ctx context.Context, id string) error {
	return s.SetSetting(ctx, activeWorkspaceKey, id)
}

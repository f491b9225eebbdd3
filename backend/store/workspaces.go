package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/clusterspace/clusterspace/backend/workspace"
)

// ErrNotFound means the row asked for does not exist.
var ErrNotFound = errors.New("not found")

const activeWorkspaceKey = "workspace.active"

// ListWorkspaces returns every workspace with its panes, in tab order.
func (s *Store) ListWorkspaces(ctx context.Context) ([]workspace.Workspace, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, name, position, grid_rows, grid_cols, row_weights, col_weights, created_at, updated_at,
		focused_pane, maximized_pane FROM workspaces ORDER BY position, created_at`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []workspace.Workspace
	index := map[string]int{}
	for rows.Next() {
		ws, err := scanWorkspace(rows)
		if err != nil {
			return nil, err
		}
		index[ws.ID] = len(out)
		out = append(out, ws)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	prows, err := s.db.QueryContext(ctx, `SELECT workspace_id, id, kind, label, grid_row, grid_col, launch FROM panes ORDER BY grid_row, grid_col`)
	if err != nil {
		return nil, err
	}
	defer prows.Close()
	for prows.Next() {
		var wsID, launch string
		var p workspace.Pane
		if err := prows.Scan(&wsID, &p.ID, &p.Kind, &p.Label, &p.Row, &p.Col, &launch); err != nil {
			return nil, err
		}
		if err := scanLaunch(&p, launch); err != nil {
			return nil, err
		}
		if i, ok := index[wsID]; ok {
			out[i].Panes = append(out[i].Panes, p)
		}
	}
	return out, prows.Err()
}

// Workspace returns one workspace with its panes, or ErrNotFound.
func (s *Store) Workspace(ctx context.Context, id string) (workspace.Workspace, error) {
	row := s.db.QueryRowContext(ctx, `SELECT id, name, position, grid_rows, grid_cols, row_weights, col_weights, created_at, updated_at,
		focused_pane, maximized_pane FROM workspaces WHERE id = ?`, id)
	ws, err := scanWorkspace(row)
	if errors.Is(err, sql.ErrNoRows) {
		return ws, fmt.Errorf("workspace %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return ws, err
	}
	rows, err := s.db.QueryContext(ctx, `SELECT id, kind, label, grid_row, grid_col, launch FROM panes WHERE workspace_id = ? ORDER BY grid_row, grid_col`, id)
	if err != nil {
		return ws, err
	}
	defer rows.Close()
	for rows.Next() {
		var p workspace.Pane
		var launch string
		if err := rows.Scan(&p.ID, &p.Kind, &p.Label, &p.Row, &p.Col, &launch); err != nil {
			return ws, err
		}
		if err := scanLaunch(&p, launch); err != nil {
			return ws, err
		}
		ws.Panes = append(ws.Panes, p)
	}
	return ws, rows.Err()
}

type scanner interface{ Scan(...any) error }

func scanWorkspace(r scanner) (workspace.Workspace, error) {
	var ws workspace.Workspace
	var rowW, colW string
	var created, updated int64
	if err := r.Scan(&ws.ID, &ws.Name, &ws.Position, &ws.Rows, &ws.Cols, &rowW, &colW, &created, &updated,
		&ws.FocusedPaneID, &ws.MaximizedPaneID); err != nil {
		return ws, err
	}
	if err := json.Unmarshal([]byte(rowW), &ws.RowWeights); err != nil {
		return ws, fmt.Errorf("workspace %q: row weights: %w", ws.ID, err)
	}
	if err := json.Unmarshal([]byte(colW), &ws.ColWeights); err != nil {
		return ws, fmt.Errorf("workspace %q: col weights: %w", ws.ID, err)
	}
	ws.CreatedAt, ws.UpdatedAt = time.UnixMilli(created).UTC(), time.UnixMilli(updated).UTC()
	return ws, nil
}

// scanLaunch decodes a pane's stored launch settings ("" for a plain shell).
func scanLaunch(p *workspace.Pane, text string) error {
	if text == "" {
		return nil
	}
	p.Launch = &workspace.Launch{}
	if err := json.Unmarshal([]byte(text), p.Launch); err != nil {
		return fmt.Errorf("pane %q: launch settings: %w", p.ID, err)
	}
	return nil
}

// SaveWorkspace inserts or replaces a workspace and its panes in one transaction.
func (s *Store) SaveWorkspace(ctx context.Context, ws workspace.Workspace) error {
	rowW, err := json.Marshal(ws.RowWeights)
	if err != nil {
		return err
	}
	colW, err := json.Marshal(ws.ColWeights)
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
			ws.ID, ws.Name, ws.Position, ws.Rows, ws.Cols, string(rowW), string(colW), ws.CreatedAt.UnixMilli(), ws.UpdatedAt.UnixMilli(),
			ws.FocusedPaneID, ws.MaximizedPaneID)
		if err != nil {
			return fmt.Errorf("save workspace %q: %w", ws.ID, err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM panes WHERE workspace_id = ?`, ws.ID); err != nil {
			return err
		}
		for _, p := range ws.Panes {
			launch := ""
			if p.Launch != nil {
				b, err := json.Marshal(p.Launch)
				if err != nil {
					return err
				}
				launch = string(b)
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
	res, err := s.db.ExecContext(ctx, `DELETE FROM workspaces WHERE id = ?`, id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("workspace %q: %w", id, ErrNotFound)
	}
	return nil
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

package workspace

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// Pane-level state the agent steers as the person does: which pane has focus, which one is
// maximized, what a terminal pane launches. Each change is saved and published like any
// other, so an attached UI follows.

// forgetGonePanes clears a focus or maximize that names a pane the grid no longer has (after
// a shrink, say).
func (ws *Workspace) forgetGonePanes() {
	has := func(id string) bool { return slices.ContainsFunc(ws.Panes, func(p Pane) bool { return p.ID == id }) }
	if ws.FocusedPaneID != "" && !has(ws.FocusedPaneID) {
		ws.FocusedPaneID = ""
	}
	if ws.MaximizedPaneID != "" && !has(ws.MaximizedPaneID) {
		ws.MaximizedPaneID = ""
	}
}

// PaneNotFound is the error for a pane id the workspace does not hold; the text tells the
// model (or person) how to find the right one. It matches ErrNotFound.
func PaneNotFound(paneID string, ws Workspace) error {
	return &paneNotFound{paneID: paneID, workspace: ws.Name}
}

type paneNotFound struct{ paneID, workspace string }

func (e *paneNotFound) Error() string {
	return fmt.Sprintf("Pane %s not found in workspace %q — call list_panes for the current ids", e.paneID, e.workspace)
}

func (e *paneNotFound) Unwrap() error { return ErrNotFound }

// paneIndex finds a pane of ws or returns PaneNotFound.
func paneIndex(ws Workspace, paneID string) (int, error) {
	i := slices.IndexFunc(ws.Panes, func(p Pane) bool { return p.ID == paneID })
	if i < 0 {
		return -1, PaneNotFound(paneID, ws)
	}
	return i, nil
}

// Focus gives the pane the keyboard focus of its workspace.
func (s *Service) Focus(ctx context.Context, id, paneID string) (Workspace, error) {
	return s.update(ctx, id, func(ws Workspace) (Workspace, error) {
		if _, err := paneIndex(ws, paneID); err != nil {
			return ws, err
		}
		ws.FocusedPaneID = paneID
		return ws, nil
	})
}

// ToggleMaximize shows the pane alone, filling the grid, or, if it is already, the whole grid
// again. A maximized pane also gets the focus.
func (s *Service) ToggleMaximize(ctx context.Context, id, paneID string) (Workspace, error) {
	return s.update(ctx, id, func(ws Workspace) (Workspace, error) {
		if _, err := paneIndex(ws, paneID); err != nil {
			return ws, err
		}
		if ws.MaximizedPaneID == paneID {
			ws.MaximizedPaneID = ""
		} else {
			ws.MaximizedPaneID, ws.FocusedPaneID = paneID, paneID
		}
		return ws, nil
	})
}

// SetLaunch sets what a terminal pane runs (nil: the person's shell). It does not restart
// anything; the caller restarts the pane's terminal.
func (s *Service) SetLaunch(ctx context.Context, id, paneID string, l *Launch) (Workspace, error) {
	if l != nil {
		filled, err := s.LaunchFor(*l)
		if err != nil {
			return Workspace{}, err
		}
		if filled.Template == "shell" && filled.Dir == "" && len(filled.Env) == 0 {
			l = nil // a plain shell needs no settings
		} else {
			l = &filled
		}
	}
	return s.update(ctx, id, func(ws Workspace) (Workspace, error) {
		i, err := paneIndex(ws, paneID)
		if err != nil {
			return ws, err
		}
		if ws.Panes[i].Kind != KindTerminal {
			return ws, fieldErr("paneId", "pane %s is a browser pane; only terminal panes have launch settings", paneID)
		}
		ws.Panes = slices.Clone(ws.Panes)
		ws.Panes[i].Launch = l
		return ws, nil
	})
}

// CreateGrid adds a workspace with a rows x cols grid of terminal panes (1-6 each) and makes
// it active, as Create does for the default 2 x 2.
func (s *Service) CreateGrid(ctx context.Context, name string, rows, cols int) (Workspace, error) {
	if err := checkGrid(rows, cols); err != nil {
		return Workspace{}, err
	}
	ws, err := s.Create(ctx, name)
	if err != nil || (rows == ws.Rows && cols == ws.Cols) {
		return ws, err
	}
	return s.SetGrid(ctx, ws.ID, rows, cols, false) // a new workspace has nothing busy to remove
}

// Find returns the workspace holding the pane.
func (s *Service) Find(ctx context.Context, paneID string) (Workspace, Pane, error) {
	all, err := s.repo.ListWorkspaces(ctx)
	if err != nil {
		return Workspace{}, Pane{}, err
	}
	for _, w := range all {
		if i := slices.IndexFunc(w.Panes, func(p Pane) bool { return p.ID == paneID }); i >= 0 {
			return w, w.Panes[i], nil
		}
	}
	return Workspace{}, Pane{}, fmt.Errorf("pane %s is in no workspace — call list_panes for the current ids: %w", paneID, ErrNotFound)
}

// Get returns one workspace.
func (s *Service) Get(ctx context.Context, id string) (Workspace, error) {
	ws, _, err := s.lookup(ctx, id)
	return ws, err
}

// Adopt makes sure a workspace with this id holds exactly these panes (ids kept), in one row,
// creating or reshaping it; a door whose panes have fixed ids (the CLI's term-1) gets a real
// workspace the agent's pane tools can list. It does not change the active workspace.
func (s *Service) Adopt(ctx context.Context, id, name string, panes []Pane) (Workspace, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ws, all, err := s.lookup(ctx, id)
	switch {
	case errors.Is(err, ErrNotFound):
		ws = Workspace{ID: id, Name: name, Position: nextPosition(all), CreatedAt: s.now()}
	case err != nil:
		return Workspace{}, err
	}
	kept := map[string]Pane{}
	for _, p := range ws.Panes {
		kept[p.ID] = p
	}
	ws.Rows, ws.Cols = 1, len(panes)
	ws.RowWeights, ws.ColWeights = evenWeights(1), evenWeights(len(panes))
	ws.Panes = nil
	for i, p := range panes {
		if old, ok := kept[p.ID]; ok && old.Kind == p.Kind {
			p.Launch = old.Launch
		}
		p.Row, p.Col = 0, i
		ws.Panes = append(ws.Panes, p)
	}
	ws.forgetGonePanes()
	ws.UpdatedAt = s.now()
	if err := Validate(ws); err != nil {
		return ws, err
	}
	for _, other := range all {
		if other.ID == id {
			continue
		}
		for _, p := range other.Panes {
			if slices.ContainsFunc(panes, func(q Pane) bool { return q.ID == p.ID }) {
				return ws, fmt.Errorf("pane %s already belongs to workspace %q", p.ID, other.Name)
			}
		}
	}
	if err := s.repo.SaveWorkspace(ctx, ws); err != nil {
		return ws, err
	}
	s.publish(ctx, EventUpdated)
	return ws, nil
}

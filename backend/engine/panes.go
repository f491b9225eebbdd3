package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/terminal"
)

// The Engine is the workspaces' PaneHolder: removing a pane (a grid shrink, a workspace
// deleted, a pane converted to the other kind) goes through ClosePane, so nothing a pane
// started outlives it.

// PaneBusy says, in words, what closing the pane would interrupt: programs running in the
// foreground of its shells, and goals working in it. Idle shells and open pages are not
// listed: closing them loses nothing the person is waiting on.
func (e *Engine) PaneBusy(ctx context.Context, paneID string) []string {
	busy := e.Terminals.Busy(paneID)
	for _, g := range e.paneGoals(ctx, paneID) {
		busy = append(busy, fmt.Sprintf("goal %q is %s in it", short(g.Spec.Goal), g.Status))
	}
	return busy
}

// ClosePane ends everything the pane holds, whatever its kind: the goals working in it are
// aborted, its terminal tabs closed (each shell's whole process group gets SIGHUP, then
// SIGKILL after a grace; an SSH tab's remote tmux session is detached, not killed), and its
// browser tabs closed (their Chromium targets with them). A pane that holds nothing is fine.
// Callers: the workspace service when a grid shrinks or a workspace is deleted; converting a
// pane to the other kind should call it too.
func (e *Engine) ClosePane(ctx context.Context, workspaceID, paneID string) error {
	var errs []error
	for _, g := range e.paneGoals(ctx, paneID) {
		if err := e.Goals.Abort(ctx, g.ID); err != nil && !errors.Is(err, goal.ErrNotFound) {
			errs = append(errs, fmt.Errorf("abort goal %s: %w", g.ID, err))
		}
	}
	if err := e.Terminals.ClosePane(paneID); err != nil && !errors.Is(err, terminal.ErrClosed) {
		errs = append(errs, fmt.Errorf("close the terminals of pane %s: %w", paneID, err))
	}
	e.Browsers.ClosePane(paneID)
	e.revokePaneMCP(paneID)
	return errors.Join(errs...)
}

// CloseWorkspace stops the deleted workspace's browser, once its panes are closed.
func (e *Engine) CloseWorkspace(ctx context.Context, workspaceID string) error {
	e.Browsers.CloseWorkspace(workspaceID)
	return nil
}

// paneGoals are the goals that work, or wait to work, in the pane.
func (e *Engine) paneGoals(ctx context.Context, paneID string) []goal.Goal {
	if e.Goals == nil {
		return nil
	}
	all, err := e.Goals.List(ctx)
	if err != nil {
		return nil // Best effort: the terminals still say what runs there.
	}
	var out []goal.Goal
	for _, g := range all {
		if g.Spec.PaneID == paneID && !g.Status.Finished() && g.Status != goal.StatusInterrupted {
			out = append(out, g)
		}
	}
	return out
}

// short keeps a goal's text readable in a one-line question.
func short(s string) string {
	const max = 60
	r := []rune(s)
	if len(r) <= max {
		return s
	}
	return string(r[:max-1]) + "…"
}

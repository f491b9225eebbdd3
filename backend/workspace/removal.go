package workspace

import (
	"context"
	"fmt"
	"strings"
)

// PaneHolder is what runs in panes (shells, browser pages, goals); the engine supplies it, so
// removing a pane from a workspace ends what it held instead of leaving it running where no
// pane can reach it.
type PaneHolder interface {
	// PaneBusy says, in words, what in the pane is busy: a program running in a shell, a goal
	// working in it. Empty when closing the pane loses nothing but idle shells and pages.
	PaneBusy(ctx context.Context, paneID string) []string
	// ClosePane ends everything the pane holds: its goals, the processes of its terminals
	// (whole process groups), its browser pages.
	ClosePane(ctx context.Context, workspaceID, paneID string) error
	// CloseWorkspace ends what the workspace holds beyond its panes (its browser process),
	// after its panes are closed.
	CloseWorkspace(ctx context.Context, workspaceID string) error
}

// SetPaneHolder wires in what runs in panes; without one, removing panes ends nothing.
func (s *Service) SetPaneHolder(h PaneHolder) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.holder = h
}

// BusyPane is one pane a change would remove while something in it is busy.
type BusyPane struct {
	PaneID string   `json:"paneId"`
	Label  string   `json:"label"`
	Busy   []string `json:"busy"`
}

// BusyError refuses a change that would remove busy panes; the caller asks the person and
// repeats the change with force.
type BusyError struct {
	Action string // "shrink the grid", "delete workspace \"X\""
	Panes  []BusyPane
}

func (e *BusyError) Error() string {
	parts := make([]string, len(e.Panes))
	for i, p := range e.Panes {
		parts[i] = fmt.Sprintf("%s: %s", p.Label, strings.Join(p.Busy, ", "))
	}
	return fmt.Sprintf("%s would end work in progress (%s): confirm to end it, or let it finish first",
		e.Action, strings.Join(parts, "; "))
}

// busyPanes lists the panes that have something busy; the caller holds s.mu.
func (s *Service) busyPanes(ctx context.Context, panes []Pane) []BusyPane {
	if s.holder == nil {
		return nil
	}
	var out []BusyPane
	for _, p := range panes {
		if busy := s.holder.PaneBusy(ctx, p.ID); len(busy) > 0 {
			out = append(out, BusyPane{PaneID: p.ID, Label: p.Label, Busy: busy})
		}
	}
	return out
}

// release ends what the removed panes held (and the workspace's own browser when it is
// gone). The change is saved already: a failure here is logged by the holder, not undone.
func (s *Service) release(ctx context.Context, h PaneHolder, workspaceID string, panes []Pane, wholeWorkspace bool) error {
	if h == nil {
		return nil
	}
	var errs []string
	for _, p := range panes {
		if err := h.ClosePane(ctx, workspaceID, p.ID); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if wholeWorkspace {
		if err := h.CloseWorkspace(ctx, workspaceID); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("the panes were removed, but ending what they held failed: %s", strings.Join(errs, "; "))
	}
	return nil
}

package panes

import (
	"context"
	"fmt"

	"github.com/clusterspace/clusterspace/backend/terminal"
	"github.com/clusterspace/clusterspace/backend/workspace"
)

// A confined goal's boundary holds its own confined tab and the panes it made or converted:
// those carry its sandbox (terminal.Manager.ConfinePane), so every shell started in them is
// confined too. Reaching any other pane's terminal, or changing any other pane, is the
// person's to allow (see tools.BoundaryUser).

// boundaryOf is the sandbox of the caller's own pane, when the caller is a confined goal.
func (s *Service) boundaryOf(c Caller) (terminal.Sandbox, bool) {
	if c.PaneID == "" {
		return terminal.Sandbox{}, false
	}
	return s.terms.PaneSandbox(c.PaneID)
}

// takeIn puts panes the caller made or converted inside its boundary, before their first
// shell starts. A shell the window started in the moment before belongs to no goal: it is
// ended, and the pane's next shell starts confined.
func (s *Service) takeIn(c Caller, paneIDs ...string) {
	sb, ok := s.boundaryOf(c)
	if !ok {
		return
	}
	for _, id := range paneIDs {
		for _, t := range s.terms.Tabs(id) {
			if !t.Confined {
				s.terms.ClosePane(id)
				break
			}
		}
		s.terms.ConfinePane(id, sb)
	}
}

// OutsideTerminal says why a caller confined to sandbox reaching a pane's terminal tab leaves
// its boundary ("" when it does not). A browser pane's page is not a terminal: the browser
// tools' own risk levels govern it.
func (s *Service) OutsideTerminal(sandbox, paneID, tabID string) string {
	if sandbox == "" || s.isBrowser(paneID) {
		return ""
	}
	return s.terms.OutsideBoundary(sandbox, paneID, tabID)
}

// OutsidePane says why a caller confined to sandbox changing a whole pane (converting it,
// restarting its terminal) leaves its boundary: the pane is not one the goal made or converted.
func (s *Service) OutsidePane(sandbox, paneID, _ string) string {
	if sandbox == "" {
		return ""
	}
	if sb, ok := s.terms.PaneSandbox(paneID); ok && sb.Dir() == sandbox {
		return ""
	}
	return fmt.Sprintf("pane %s is not inside this goal's sandbox %s (the goal did not make it): changing it is the person's to allow, every time", paneID, sandbox)
}

// isBrowser reports whether the pane is a browser pane of any workspace.
func (s *Service) isBrowser(paneID string) bool {
	_, p, err := s.ws.Find(context.Background(), paneID)
	return err == nil && p.Kind == workspace.KindBrowser
}

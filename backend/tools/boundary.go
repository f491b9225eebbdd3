package tools

import "encoding/json"

// BoundaryUser is implemented by tools that act on a pane: a goal with a sandbox may reach only
// the terminals inside its boundary (its own confined tab, the panes it made or converted).
// Outside says why the call reaches out of the caller's boundary, "" when it stays inside or
// the caller is not confined. The policy asks the person for such a call every time.
type BoundaryUser interface {
	Outside(call Call) string
}

// bounded is a tool whose calls name a pane (pane_id, default the caller's own) and maybe a
// tab (tab_id), judged by outside.
type bounded struct {
	Tool
	outside func(sandbox, paneID, tabID string) string
}

// inBoundary makes t a BoundaryUser judged by outside; t keeps its parallel safety.
func inBoundary(t Tool, outside func(sandbox, paneID, tabID string) string) Tool {
	return bounded{Tool: t, outside: outside}
}

func (b bounded) Outside(c Call) string {
	if c.Sandbox == "" {
		return ""
	}
	var target struct {
		PaneID string `json:"pane_id"`
		TabID  string `json:"tab_id"`
	}
	if json.Unmarshal(c.Args, &target) != nil {
		return "" // Bad arguments fail in Run, before anything is reached.
	}
	if target.PaneID == "" {
		target.PaneID = c.PaneID
	}
	return b.outside(c.Sandbox, target.PaneID, target.TabID)
}

func (b bounded) ParallelSafe() bool {
	ps, ok := b.Tool.(ParallelSafe)
	return ok && ps.ParallelSafe()
}

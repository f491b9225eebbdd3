package tools

import (
	"encoding/json"
	"strings"

	"github.com/clusterspace/clusterspace/backend/browser"
)

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

// URLUser is implemented by tools that open an address in a browser pane. The browser runs
// outside a confined goal's network namespace, so the policy judges each address instead: a
// confined goal may not open this machine's own services (serve, DevTools, MCP HTTP servers).
type URLUser interface {
	URLs(args json.RawMessage) ([]string, error)
}

func (navigateTool) URLs(args json.RawMessage) ([]string, error) {
	var p navigateParams
	if err := json.Unmarshal(args, &p); err != nil {
		return nil, err
	}
	return browserURLs(p.URL), nil
}

// browserURLs is where the browser goes for what the model typed, as the browser reads it
// (a bare host gets a scheme; view-source: shows the page it names).
func browserURLs(raw string) []string {
	u, err := browser.NormalizeURL(raw)
	if err != nil {
		return nil // the tool refuses it before the browser goes anywhere
	}
	if len(u) > len("view-source:") && strings.EqualFold(u[:len("view-source:")], "view-source:") {
		return browserURLs(u[len("view-source:"):])
	}
	return []string{u}
}

func (t *openBrowserTab) URLs(args json.RawMessage) ([]string, error) {
	var p openBrowserTabParams
	if err := json.Unmarshal(args, &p); err != nil {
		return nil, err
	}
	if p.URL == "" {
		return nil, nil
	}
	return browserURLs(p.URL), nil
}

// OutsideRunner is implemented by tools that run where no goal's sandbox reaches (an MCP
// server's own process): a confined goal's call of one is the person's to allow, every time.
// RunsOutside names that place.
type OutsideRunner interface {
	RunsOutside() string
}

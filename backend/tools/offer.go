package tools

import (
	"context"
	"maps"
	"strings"

	"github.com/clusterspace/clusterspace/backend/panes"
)

// Tools are offered by need: every request of a goal or chat used to carry all 73 tool
// definitions (42.6 KB as sent, ≈ 10.7k tokens), most of them for a browser or a fleet the
// work does not have. A Group says when a tool is sent up front; the rest wait behind find_tools
// (find.go), which finds them by what they do. The grouping is by name, here in one table,
// so the tool families stay as they are.

// Group is when a tool is offered up front.
type Group string

const (
	// GroupCore tools go with every request: the terminal, the goal's own tools, the panes,
	// skills, and find_tools.
	GroupCore Group = "core"
	// GroupBrowser tools go when the work has a browser pane: its workspace holds one, its
	// criterion looks at a page, or it opens one.
	GroupBrowser Group = "browser"
	// GroupFleet tools go when the work belongs to a fleet.
	GroupFleet Group = "fleet"
	// GroupFound tools go only once find_tools found them (or the model called one): rare
	// actions, layout, and the tools of MCP servers.
	GroupFound Group = "found"
)

// groups places the built-in tools that are not core. A built-in tool missing here is core,
// so a new tool is never hidden by accident; a new browser_* tool is a browser tool.
var groups = map[string]Group{
	// The browser tools that act on tabs and panes rather than on a page.
	"open_browser_tab": GroupBrowser, "switch_browser_tab": GroupBrowser, "close_browser_tab": GroupBrowser,
	// Browser actions most pages never need.
	"browser_save_pdf": GroupFound, "browser_save_html": GroupFound, "browser_set_files": GroupFound,
	"browser_set_cookie": GroupFound, "browser_get_cookies": GroupFound, "browser_fill_login": GroupFound,
	"browser_drag": GroupFound, "browser_pane_doctor": GroupFound, "browser_get_action_log": GroupFound,
	"browser_save_recipe": GroupFound, "browser_run_recipe": GroupFound, "browser_list_recipes": GroupFound,
	"convert_pane_to_terminal": GroupFound,
	// The window's layout: the person's to arrange, rarely the work's.
	"focus_pane": GroupFound, "maximize_pane": GroupFound, "create_workspace": GroupFound,
	// Fleets: agents of other panes, their tasks and their context.
	"get_fleet_status": GroupFleet, "assign_task": GroupFleet, "create_goal": GroupFleet, "wait_for_agent": GroupFleet,
	"share_context": GroupFleet, "set_agent_role": GroupFleet, "complete_task": GroupFleet, "fail_task": GroupFleet,
	"wait": GroupFleet,
}

// GroupTable is the grouping of the built-in tools that are not core, by name.
func GroupTable() map[string]Group { return maps.Clone(groups) }

// Upfront is implemented by source tools (an MCP server's tool) the person's config marks to
// be offered with every request; the others are found with find_tools.
type Upfront interface {
	Upfront() bool
}

// sourcePlugin is the Source of the person's JavaScript plugins (plugins.Set.Kind).
const sourcePlugin = "plugin"

// GroupOf says when the tool d describes is offered up front: a built-in one by the table
// above; a plugin always, since the person wrote it into their config dir for this app and
// plugins are few and small; an MCP server's tool only once found with find_tools (a server
// brings a whole suite, which is what holding tools back is for), unless it is Upfront.
func GroupOf(d Definition) Group {
	switch {
	case d.Source == "":
		return builtinGroup(d.Name)
	case d.Source == sourcePlugin || d.upfront:
		return GroupCore
	}
	return GroupFound
}

func builtinGroup(name string) Group {
	if g, ok := groups[name]; ok {
		return g
	}
	if strings.HasPrefix(name, "browser_") {
		return GroupBrowser
	}
	return GroupCore
}

// PaneLister lists the panes of a caller's workspace (panes.Service).
type PaneLister interface {
	List(ctx context.Context, c panes.Caller, cursor string, limit int) (panes.Page, error)
}

// SetPanes tells the registry where to look at a caller's workspace (see Situation).
func (r *Registry) SetPanes(p PaneLister) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.panes = p
}

// Situation names the groups the caller's workspace calls for now: the browser tools when it
// holds a browser pane. A pane not started yet lists as "empty" and does not count. Without
// panes (SetPanes), or when the workspace cannot be read, none.
func (r *Registry) Situation(ctx context.Context, c Call) []Group {
	r.mu.RLock()
	p := r.panes
	r.mu.RUnlock()
	if p == nil || (c.PaneID == "" && c.WorkspaceID == "") {
		return nil
	}
	page, err := p.List(ctx, panes.Caller{PaneID: c.PaneID, WorkspaceID: c.WorkspaceID}, "", panes.MaxPage)
	if err != nil {
		return nil // Best effort: the pane may be gone; the model can still find what it needs.
	}
	for _, it := range page.Items {
		if it.Kind == "browser" {
			return []Group{GroupBrowser}
		}
	}
	return nil
}

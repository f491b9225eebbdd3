package tools

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/clusterspace/clusterspace/backend/panes"
	"github.com/clusterspace/clusterspace/backend/workspace"
)

// The workspace tools let the agent see and steer its workspace as the person does: list the
// panes, look at one, focus or maximize it, switch and open tabs, reconnect, convert a pane
// between terminal and browser, open a new workspace. They act on the caller's workspace (a
// goal's: the one holding its pane; a chat's: its own) through the same engine state the
// window shows.

type listPanesParams struct {
	Cursor string `json:"cursor,omitempty" desc:"Where to go on from, as next_cursor of the previous page."`
	Limit  *int   `json:"limit,omitempty" default:"50" desc:"Panes per page (1-50)."`
}

type paneIDParams struct {
	PaneID string `json:"pane_id" desc:"Id of the pane (from list_panes)."`
}

type capturePaneParams struct {
	PaneID string `json:"pane_id,omitempty" desc:"Id of the pane (from list_panes); default your own pane."`
}

type createWorkspaceParams struct {
	Name string `json:"name" desc:"Name of the new workspace, shown on its tab."`
	Rows int    `json:"rows" desc:"Rows of panes (1-6)."`
	Cols int    `json:"cols" desc:"Columns of panes (1-6)."`
}

type paneTabParams struct {
	PaneID string `json:"pane_id" desc:"Id of the pane (from list_panes)."`
	TabID  string `json:"tab_id" desc:"Id of the tab (list_panes shows each pane's tabs)."`
}

type reconnectParams struct {
	PaneID string `json:"pane_id" desc:"Id of the pane (from list_panes)."`
	TabID  string `json:"tab_id,omitempty" desc:"Tab to reconnect; default the pane's active tab."`
}

type openBrowserTabParams struct {
	PaneID string `json:"pane_id" desc:"Id of a browser pane (from list_panes)."`
	URL    string `json:"url,omitempty" desc:"Page to open; default a blank page."`
}

type toBrowserParams struct {
	PaneID string `json:"pane_id" desc:"Id of the terminal pane to turn into a browser pane."`
	URL    string `json:"url,omitempty" desc:"Page to open in it; default a blank page."`
	Force  bool   `json:"force,omitempty" desc:"End a command running in the pane's terminal. Without it a busy pane is refused, naming what runs: ask the user first."`
}

type toTerminalParams struct {
	PaneID string `json:"pane_id" desc:"Id of the browser pane to turn into a terminal pane."`
	// No enum: the person's config dir can add templates (templates/ID.md); an unknown id is
	// refused naming the ones there are.
	Template string `json:"template,omitempty" default:"shell" desc:"What the terminal runs: a launch template id — shell, claude (Claude Code), codex (Codex CLI), aider, python, or one the person added; an unknown id is answered with the list."`
}

// RegisterWorkspace adds the workspace tools, answered by ps.
func RegisterWorkspace(r *Registry, ps *panes.Service) {
	r.Register(
		// Read-only: it shows the workspace.
		New("list_panes", "List the panes of your workspace as JSON {workspace, items, has_more, next_cursor, total}. Each item "+
			"starts with pane_id (the id every pane tool takes), label (the pane's name in its header) and shown_as "+
			"(\"label (pane_id)\": the pane's header shows exactly these two, so name a pane to the person by its shown_as, "+
			"never by a title or a position alone); then kind (terminal, browser, or empty when nothing runs in it yet), "+
			"title (its shown tab's title), row and col, focused, maximized, yours, and its tabs; terminals add cwd, busy, "+
			"idle_ms, the launch command and SSH host, browsers the URL, page title and whether it is loading.",
			ReadOnly, func(ctx context.Context, call Call, p listPanesParams) (Result, error) {
				limit := 0
				if p.Limit != nil {
					limit = *p.Limit
				}
				page, err := ps.List(ctx, callerOf(call), p.Cursor, limit)
				if err != nil {
					return paneError(err)
				}
				return JSONResult(listed(page))
			}).Parallel(),
		// Read-only: it looks.
		inBoundary(New("capture_screenshot", "Look at a pane: a browser pane's page as a picture; a terminal pane's visible screen as text "+
			"with the cursor position, and drawn as a picture.",
			ReadOnly, func(ctx context.Context, call Call, p capturePaneParams) (Result, error) {
				c, err := ps.Capture(ctx, callerOf(call), p.PaneID)
				if err != nil {
					return paneError(err)
				}
				if c.Kind == workspace.KindBrowser {
					return Result{Text: fmt.Sprintf("Screenshot of browser pane %s.", c.PaneID),
						Images: []Image{{MediaType: "image/png", Data: c.PNG}}}, nil
				}
				return Result{Text: fmt.Sprintf("Screen of terminal pane %s (cursor at row %d, column %d):\n%s",
					c.PaneID, c.CursorRow, c.CursorCol, c.Text), Images: []Image{{MediaType: "image/png", Data: c.PNG}}}, nil
			}).Parallel(), ps.OutsideTerminal),
		// Read-only: it changes only which pane the window shows with the keyboard focus.
		New("focus_pane", "Give a pane of your workspace the keyboard focus in the window.",
			ReadOnly, func(ctx context.Context, call Call, p paneIDParams) (Result, error) {
				if _, err := ps.Focus(ctx, callerOf(call), p.PaneID); err != nil {
					return paneError(err)
				}
				return Result{Text: fmt.Sprintf("Pane %s has the focus.", p.PaneID)}, nil
			}),
		// Read-only: it changes only how the window lays the panes out.
		New("maximize_pane", "Show a pane alone, filling the workspace; call it again on that pane to show the whole grid.",
			ReadOnly, func(ctx context.Context, call Call, p paneIDParams) (Result, error) {
				on, err := ps.Maximize(ctx, callerOf(call), p.PaneID)
				if err != nil {
					return paneError(err)
				}
				if on {
					return Result{Text: fmt.Sprintf("Pane %s is maximized (and focused).", p.PaneID)}, nil
				}
				return Result{Text: fmt.Sprintf("Pane %s is back in the grid.", p.PaneID)}, nil
			}),
		// write_local: it stores a workspace and starts its shells.
		New("create_workspace", "Open a new workspace (a tab in the window) with a rows x cols grid of terminal panes, 1-6 each.",
			WriteLocal, func(ctx context.Context, call Call, p createWorkspaceParams) (Result, error) {
				ws, err := ps.CreateWorkspace(ctx, callerOf(call), p.Name, p.Rows, p.Cols)
				if err != nil {
					return paneError(err)
				}
				ids := make([]string, len(ws.Panes))
				for i, pane := range ws.Panes {
					ids[i] = pane.ID
				}
				return JSONResult(map[string]any{"workspace_id": ws.ID, "name": ws.Name, "rows": ws.Rows, "cols": ws.Cols, "pane_ids": ids,
					"note": "The window shows it now. Your pane tools keep working on your own workspace."})
			}),
		// Read-only: it changes which tab a pane shows.
		inBoundary(New("switch_terminal_tab", "Show another tab of a terminal pane; terminal tools without tab_id then act on it.",
			ReadOnly, onTab(ps.SwitchTerminalTab, showsTab)), ps.OutsideTerminal),
		// network_get when it loads a URL (see openBrowserTabRisk), else write_local.
		&openBrowserTab{New("open_browser_tab", "Open a new tab in a browser pane, at url or a blank page, and show it.",
			NetworkGet, func(ctx context.Context, call Call, p openBrowserTabParams) (Result, error) {
				id, err := ps.OpenBrowserTab(ctx, callerOf(call), p.PaneID, p.URL)
				if err != nil {
					return paneError(err)
				}
				return Result{Text: fmt.Sprintf("Opened tab %s in pane %s.", id, p.PaneID)}, nil
			})},
		// Read-only: it changes which tab a pane shows.
		New("switch_browser_tab", "Show another tab of a browser pane; browser tools then act on it.",
			ReadOnly, onTab(ps.SwitchBrowserTab, showsTab)),
		// write_local: it closes a page (what was typed in it is lost).
		New("close_browser_tab", "Close a tab of a browser pane (not its last tab).",
			WriteLocal, onTab(ps.CloseBrowserTab, func(p paneTabParams) string {
				return fmt.Sprintf("Closed tab %s of pane %s.", p.TabID, p.PaneID)
			})),
		// write_local: it restarts a process or page.
		inBoundary(New("reconnect_pane", "Bring a pane back: a terminal tab gets a fresh process (an SSH tab re-attaches its tmux session); "+
			"a browser pane's tab gets a new page at its last URL (after a crash or when it stopped answering).",
			WriteLocal, func(ctx context.Context, call Call, p reconnectParams) (Result, error) {
				did, err := ps.Reconnect(ctx, callerOf(call), p.PaneID, p.TabID)
				if err != nil {
					return paneError(err)
				}
				return Result{Text: fmt.Sprintf("Pane %s: %s.", p.PaneID, did)}, nil
			}), ps.OutsideTerminal),
		// write_local: it ends what ran in the pane.
		inBoundary(New("convert_pane_to_browser", "Turn a terminal pane of your workspace into a browser pane (not your own pane, nor one a goal works in). "+
			"A command running in it is ended only with force.",
			WriteLocal, func(ctx context.Context, call Call, p toBrowserParams) (Result, error) {
				if _, err := ps.Convert(ctx, callerOf(call), p.PaneID, workspace.KindBrowser, p.URL, "", p.Force); err != nil {
					return paneError(err)
				}
				return Result{Text: fmt.Sprintf("Pane %s is a browser pane now.", p.PaneID)}, nil
			}), ps.OutsidePane),
		// write_local: it ends what ran in the pane.
		inBoundary(New("convert_pane_to_terminal", "Turn a browser pane of your workspace into a terminal pane running the shell or a launch template "+
			"(Claude Code, Codex CLI, Aider, Python); not your own pane, nor one a goal works in.",
			WriteLocal, func(ctx context.Context, call Call, p toTerminalParams) (Result, error) {
				if _, err := ps.Convert(ctx, callerOf(call), p.PaneID, workspace.KindTerminal, "", p.Template, true); err != nil {
					return paneError(err)
				}
				return Result{Text: fmt.Sprintf("Pane %s is a terminal pane now.", p.PaneID)}, nil
			}), ps.OutsidePane),
	)
	// Offering tools by need (offer.go) looks at the same workspaces, and find_tools comes with
	// them: the engine's registry has both, while the small registries of tests, which never
	// call this, offer every tool as before.
	if ps != nil {
		r.SetPanes(ps)
	}
	r.Register(FindTools(r))
}

// openBrowserTab loads a page only when given a URL: without one it is write_local.
type openBrowserTab struct {
	*Func[openBrowserTabParams]
}

func (t *openBrowserTab) RiskFor(args json.RawMessage) (Risk, string) {
	var p openBrowserTabParams
	if json.Unmarshal(args, &p) == nil && p.URL == "" {
		return WriteLocal, ""
	}
	return t.Risk(), ""
}

// callerOf is whose view a call has: a goal's pane, a chat's workspace.
// onTab is the handler of a tool that acts on one tab of a pane: act does it, done says what
// was done.
func onTab(act func(ctx context.Context, c panes.Caller, paneID, tabID string) error, done func(paneTabParams) string) func(context.Context, Call, paneTabParams) (Result, error) {
	return func(ctx context.Context, call Call, p paneTabParams) (Result, error) {
		if err := act(ctx, callerOf(call), p.PaneID, p.TabID); err != nil {
			return paneError(err)
		}
		return Result{Text: done(p)}, nil
	}
}

func showsTab(p paneTabParams) string { return fmt.Sprintf("Pane %s shows tab %s.", p.PaneID, p.TabID) }

func callerOf(c Call) panes.Caller { return panes.Caller{WorkspaceID: c.WorkspaceID, PaneID: c.PaneID} }

// paneError hands a refusal (unknown pane or tab, wrong kind, busy pane, bad grid) back to
// the model as an error result it can act on: the message says what to do.
func paneError(err error) (Result, error) { return Errorf("%v", err), nil }

// listedPane is one pane as list_panes shows it: the handles the person sees in the pane's
// header first (label and id, and the two as the model should write them), then the rest. The
// outer pane_id and label hide the embedded item's own, so each appears once.
type listedPane struct {
	PaneID  string `json:"pane_id"`
	Label   string `json:"label"`
	ShownAs string `json:"shown_as"`
	panes.Item
}

// listedPage is a page of list_panes.
type listedPage struct {
	Workspace  string       `json:"workspace"`
	Items      []listedPane `json:"items"`
	HasMore    bool         `json:"has_more"`
	NextCursor string       `json:"next_cursor,omitempty"`
	Total      int          `json:"total"`
}

func listed(p panes.Page) listedPage {
	out := listedPage{Workspace: p.Workspace, Items: make([]listedPane, 0, len(p.Items)), HasMore: p.HasMore, NextCursor: p.NextCursor, Total: p.Total}
	for _, it := range p.Items {
		out.Items = append(out.Items, listedPane{PaneID: it.PaneID, Label: it.Label, ShownAs: PaneHandle(it.Label, it.PaneID), Item: it})
	}
	return out
}

// PaneHandle is how the person and the agent both name a pane: its label and its id, as the
// pane's header shows them side by side ("Terminal 1.1 (pane-6334ab12cd34)").
func PaneHandle(label, id string) string {
	if label == "" {
		return id
	}
	return label + " (" + id + ")"
}

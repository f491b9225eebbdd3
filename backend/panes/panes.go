// Package panes is the workspace as the agent sees and steers it: the panes of the caller's
// workspace with what runs in them (list and summary), and the controls a person has in the
// window — focus, maximize, tabs, reconnect, convert between terminal and browser, launch
// settings, a new workspace. It joins the workspace layout with the live terminal and browser
// managers; the UI and the agent's tools call the same methods, so both see one state.
package panes

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/clusterspace/clusterspace/backend/browser"
	"github.com/clusterspace/clusterspace/backend/terminal"
	"github.com/clusterspace/clusterspace/backend/workspace"
)

// Caller says whose view a call has: a goal names its own pane (its workspace is the one
// holding it), a chat its workspace.
type Caller struct {
	WorkspaceID string
	PaneID      string
}

// Service answers the agent's and the UI's pane calls.
type Service struct {
	ws       *workspace.Service
	terms    *terminal.Manager
	browsers *browser.Manager

	mu sync.RWMutex
	// workingIn names the goal running in a pane; set once the goal runner exists.
	workingIn func(paneID string) (string, bool)
	now       func() time.Time
}

// New returns the pane service over the engine's workspaces, terminals and browsers.
func New(ws *workspace.Service, terms *terminal.Manager, browsers *browser.Manager) *Service {
	return &Service{ws: ws, terms: terms, browsers: browsers, now: time.Now}
}

// SetGoals tells the service which goal works in a pane, so a pane a goal runs in is never
// converted under it.
func (s *Service) SetGoals(workingIn func(paneID string) (goalID string, ok bool)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.workingIn = workingIn
}

func (s *Service) goalIn(paneID string) (string, bool) {
	s.mu.RLock()
	f := s.workingIn
	s.mu.RUnlock()
	if f == nil {
		return "", false
	}
	return f(paneID)
}

// ErrNoWorkspace means the caller belongs to no workspace (a goal whose pane was removed).
var ErrNoWorkspace = errors.New("no workspace")

// workspaceOf returns the caller's workspace.
func (s *Service) workspaceOf(ctx context.Context, c Caller) (workspace.Workspace, error) {
	if c.PaneID != "" {
		ws, _, err := s.ws.Find(ctx, c.PaneID)
		if err != nil {
			return ws, fmt.Errorf("%w: your pane %s is in no workspace any more", ErrNoWorkspace, c.PaneID)
		}
		return ws, nil
	}
	if c.WorkspaceID != "" {
		return s.ws.Get(ctx, c.WorkspaceID)
	}
	return workspace.Workspace{}, fmt.Errorf("%w: this call belongs to no workspace", ErrNoWorkspace)
}

// pane returns the caller's workspace and one of its panes; an id the workspace does not hold
// is refused with the message that tells the model what to do.
func (s *Service) pane(ctx context.Context, c Caller, paneID string) (workspace.Workspace, workspace.Pane, error) {
	ws, err := s.workspaceOf(ctx, c)
	if err != nil {
		return ws, workspace.Pane{}, err
	}
	i := slices.IndexFunc(ws.Panes, func(p workspace.Pane) bool { return p.ID == paneID })
	if i < 0 {
		return ws, workspace.Pane{}, workspace.PaneNotFound(paneID, ws)
	}
	return ws, ws.Panes[i], nil
}

// Tab is one tab of a pane.
type Tab struct {
	TabID     string `json:"tab_id"`
	Title     string `json:"title"`
	Active    bool   `json:"active"`
	Connected bool   `json:"connected"` // a terminal's process runs; a browser tab has a live page
}

// Item is one pane as list_panes shows it.
type Item struct {
	PaneID    string `json:"pane_id"`
	Kind      string `json:"kind"` // terminal | browser | empty (nothing started in it yet)
	Title     string `json:"title"`
	Label     string `json:"label"`
	Row       int    `json:"row"`
	Col       int    `json:"col"`
	Focused   bool   `json:"focused"`
	Maximized bool   `json:"maximized"`
	Yours     bool   `json:"yours"`
	Tabs      []Tab  `json:"tabs"`
	// Terminal panes.
	Cwd     string `json:"cwd,omitempty"`
	Busy    *bool  `json:"busy,omitempty"`
	IdleMS  *int64 `json:"idle_ms,omitempty"`
	Launch  string `json:"launch,omitempty"` // the launch command line; "" for the shell
	SSHHost string `json:"ssh_host,omitempty"`
	// Agent is the state of the coding agent CLI the terminal runs, read off its screen:
	// working, idle, asking or finished ("" when it runs none the terminal recognises).
	Agent string `json:"agent,omitempty"`
	// Browser panes.
	URL       string `json:"url,omitempty"`
	PageTitle string `json:"page_title,omitempty"`
	Loading   *bool  `json:"loading,omitempty"`
}

// Page is one page of list_panes.
type Page struct {
	Workspace  string `json:"workspace"`
	Items      []Item `json:"items"`
	HasMore    bool   `json:"has_more"`
	NextCursor string `json:"next_cursor,omitempty"`
	Total      int    `json:"total"`
}

// MaxPage is list_panes' default and largest page.
const MaxPage = 50

// List returns a page of the caller's workspace's panes, in grid order (row by row).
func (s *Service) List(ctx context.Context, c Caller, cursor string, limit int) (Page, error) {
	if limit == 0 {
		limit = MaxPage
	}
	if limit < 1 || limit > MaxPage {
		return Page{}, fmt.Errorf("limit %d is out of range: use 1-%d", limit, MaxPage)
	}
	start := 0
	if cursor != "" {
		n, err := strconv.Atoi(cursor)
		if err != nil || n < 0 {
			return Page{}, fmt.Errorf("cursor %q is not one list_panes returned: leave it out to start from the first pane", cursor)
		}
		start = n
	}
	ws, err := s.workspaceOf(ctx, c)
	if err != nil {
		return Page{}, err
	}
	panes := slices.Clone(ws.Panes)
	slices.SortFunc(panes, func(a, b workspace.Pane) int { return (a.Row*16 + a.Col) - (b.Row*16 + b.Col) })
	page := Page{Workspace: ws.Name, Items: []Item{}, Total: len(panes)}
	if start > len(panes) {
		start = len(panes)
	}
	end := min(start+limit, len(panes))
	for _, p := range panes[start:end] {
		page.Items = append(page.Items, s.item(ws, p, c))
	}
	if end < len(panes) {
		page.HasMore, page.NextCursor = true, strconv.Itoa(end)
	}
	return page, nil
}

func (s *Service) item(ws workspace.Workspace, p workspace.Pane, c Caller) Item {
	it := Item{PaneID: p.ID, Kind: string(p.Kind), Title: p.Label, Label: p.Label, Row: p.Row, Col: p.Col,
		Focused: ws.FocusedPaneID == p.ID, Maximized: ws.MaximizedPaneID == p.ID, Yours: c.PaneID == p.ID, Tabs: []Tab{}}
	switch p.Kind {
	case workspace.KindTerminal:
		if p.Launch != nil && p.Launch.Command != "" {
			it.Launch = strings.Join(append([]string{p.Launch.Command}, p.Launch.Args...), " ")
		}
		tabs := s.terms.Tabs(p.ID)
		if len(tabs) == 0 {
			it.Kind = "empty"
			return it
		}
		for _, t := range tabs {
			it.Tabs = append(it.Tabs, Tab{TabID: t.TabID, Title: t.Title, Active: t.Active, Connected: t.Running})
		}
		st, err := s.terms.Status(p.ID, "")
		if err != nil {
			return it
		}
		busy := st.Foreground != ""
		it.Busy = &busy
		it.Agent = string(st.Agent)
		if !st.LastOutput.IsZero() {
			idle := s.now().Sub(st.LastOutput).Milliseconds()
			it.IdleMS = &idle
		}
		if st.Tab.Title != "" {
			it.Title = st.Tab.Title
		}
		it.SSHHost = st.Tab.Remote
		if st.Tab.PID > 0 && st.Tab.Remote == "" {
			it.Cwd, _ = os.Readlink(fmt.Sprintf("/proc/%d/cwd", st.Tab.PID))
		}
	case workspace.KindBrowser:
		tabs := s.browsers.Tabs(p.ID)
		if len(tabs) == 0 {
			it.Kind = "empty"
			return it
		}
		for _, t := range tabs {
			it.Tabs = append(it.Tabs, Tab{TabID: t.TabID, Title: t.Title, Active: t.Active, Connected: !t.Crashed && !t.Discarded})
			if t.Active {
				loading := t.Loading
				it.URL, it.PageTitle, it.Loading = t.URL, t.Title, &loading
				if t.Title != "" {
					it.Title = t.Title // what the pane shows, as a terminal's title is its tab's
				}
			}
		}
	}
	return it
}

// Summary is a compact, live description of the caller's workspace for the model's newest
// message each turn: one line per pane with its id, kind, title, where it is (cwd or URL) and
// which one is the caller's own. It is "" when the caller has no workspace.
func (s *Service) Summary(ctx context.Context, c Caller) string {
	page, err := s.List(ctx, c, "", MaxPage)
	if err != nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Panes of workspace %q (ids for the pane tools; list_panes has more):\n", page.Workspace)
	for _, it := range page.Items {
		fmt.Fprintf(&b, "- %s %s %q", it.PaneID, it.Kind, it.Title)
		switch {
		case it.URL != "":
			fmt.Fprintf(&b, " %s", it.URL)
		case it.Cwd != "":
			fmt.Fprintf(&b, " cwd=%s", it.Cwd)
		}
		if it.Launch != "" {
			fmt.Fprintf(&b, " runs=%q", it.Launch)
		}
		if it.Busy != nil && *it.Busy {
			b.WriteString(" busy")
		}
		if it.Agent != "" {
			fmt.Fprintf(&b, " agent=%s", it.Agent)
		}
		var marks []string
		if it.Yours {
			marks = append(marks, "yours")
		}
		if it.Focused {
			marks = append(marks, "focused")
		}
		if it.Maximized {
			marks = append(marks, "maximized")
		}
		if len(marks) > 0 {
			fmt.Fprintf(&b, " [%s]", strings.Join(marks, ", "))
		}
		b.WriteByte('\n')
	}
	if page.HasMore {
		fmt.Fprintf(&b, "… and %d more panes: call list_panes with a cursor.\n", page.Total-len(page.Items))
	}
	return b.String()
}

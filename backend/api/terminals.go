package api

import (
	"context"
	"fmt"
	"net/http"

	"github.com/clusterspace/clusterspace/backend/rpc"
	"github.com/clusterspace/clusterspace/backend/terminal"
)

// TerminalSizeArgs names a terminal pane and the size its view has (0: 80 x 24).
type TerminalSizeArgs struct {
	PaneID string `json:"paneId"`
	Cols   int    `json:"cols"`
	Rows   int    `json:"rows"`
}

// size is the view's size, or the terminals' default size until the view reports its own.
func (a TerminalSizeArgs) size() (int, int) {
	c, r := a.Cols, a.Rows
	if c <= 0 {
		c = terminal.DefaultCols
	}
	if r <= 0 {
		r = terminal.DefaultRows
	}
	return c, r
}

// TerminalPaneArgs names a terminal pane.
type TerminalPaneArgs struct {
	PaneID string `json:"paneId"`
}

// TabArgs names a tab of a terminal pane.
type TabArgs struct {
	PaneID string `json:"paneId"`
	TabID  string `json:"tabId"`
}

// TabsResult is a pane's tabs.
type TabsResult struct {
	Tabs []terminal.TabInfo `json:"tabs"`
}

// SetBroadcastArgs says whether what is typed in any included pane goes to this one too.
type SetBroadcastArgs struct {
	PaneID  string `json:"paneId"`
	Include bool   `json:"include"`
}

// OpenSSHArgs opens a tab in the pane connected to a saved SSH server.
type OpenSSHArgs struct {
	PaneID   string `json:"paneId"`
	ServerID string `json:"serverId"`
	Cols     int    `json:"cols"`
	Rows     int    `json:"rows"`
}

// RemoteSessionsResult is the tmux sessions on an SSH server.
type RemoteSessionsResult struct {
	Sessions []terminal.RemoteSession `json:"sessions"`
}

// RemoteSessionArgs names a tmux session on a saved SSH server.
type RemoteSessionArgs struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

func addTerminals(t *rpc.Table, s Services) {
	terms := s.Terminals
	// Terminals start only for panes that exist, never for an id a client made up.
	pane := func(ctx context.Context, id string) error {
		if !s.Workspaces.HasPane(ctx, id) {
			return &StatusError{Status: http.StatusNotFound, Err: fmt.Errorf("no pane %q in any workspace", id)}
		}
		return nil
	}
	tabAction := func(name, route string, act func(ctx context.Context, pane, tab string) error) {
		rpc.Do(t, rpc.Method{Name: name, Route: route}, func(ctx context.Context, a TabArgs) error {
			if err := pane(ctx, a.PaneID); err != nil {
				return err
			}
			return act(ctx, a.PaneID, a.TabID)
		})
	}
	rpc.Add(t, rpc.Method{Name: "TerminalOpen", Route: "POST /api/panes/{paneId}/terminal"}, func(ctx context.Context, a TerminalSizeArgs) (TabsResult, error) {
		if err := pane(ctx, a.PaneID); err != nil {
			return TabsResult{}, err
		}
		cols, rows := a.size()
		if _, err := s.Panes.EnsureTerminal(ctx, a.PaneID, cols, rows); err != nil {
			return TabsResult{}, err
		}
		return TabsResult{Tabs: terms.Tabs(a.PaneID)}, nil
	})
	rpc.Add(t, rpc.Method{Name: "TerminalNewTab", Route: "POST /api/panes/{paneId}/terminal/tabs", Status: http.StatusCreated}, func(ctx context.Context, a TerminalSizeArgs) (terminal.TabInfo, error) {
		if err := pane(ctx, a.PaneID); err != nil {
			return terminal.TabInfo{}, err
		}
		cols, rows := a.size()
		return terms.Open(ctx, terminal.Spec{PaneID: a.PaneID, Cols: cols, Rows: rows})
	})
	rpc.Add(t, rpc.Method{Name: "TerminalTabs", Route: "GET /api/panes/{paneId}/terminal/tabs"}, func(ctx context.Context, a TerminalPaneArgs) (TabsResult, error) {
		if err := pane(ctx, a.PaneID); err != nil {
			return TabsResult{}, err
		}
		return TabsResult{Tabs: terms.Tabs(a.PaneID)}, nil
	})
	tabAction("TerminalRestart", "POST /api/panes/{paneId}/terminal/tabs/{tabId}/restart", terms.Restart)
	tabAction("TerminalCloseTab", "DELETE /api/panes/{paneId}/terminal/tabs/{tabId}", func(_ context.Context, p, tab string) error { return terms.CloseTab(p, tab) })
	tabAction("TerminalActivate", "POST /api/panes/{paneId}/terminal/tabs/{tabId}/activate", func(_ context.Context, p, tab string) error { return terms.SetActive(p, tab) })
	rpc.Do(t, rpc.Method{Name: "TerminalSetBroadcast", Route: "PUT /api/panes/{paneId}/broadcast"}, func(ctx context.Context, a SetBroadcastArgs) error {
		if err := pane(ctx, a.PaneID); err != nil {
			return err
		}
		terms.SetBroadcast(a.PaneID, a.Include)
		return nil
	})
	target := func(ctx context.Context, id string) (terminal.SSHTarget, error) {
		v, err := s.SSH.Resolve(ctx, id)
		if err != nil {
			return terminal.SSHTarget{}, err
		}
		return terminal.SSHTarget{Host: v.Host, Port: v.Port, User: v.User, KeyPath: v.KeyPath, Password: v.Password}, nil
	}
	rpc.Add(t, rpc.Method{Name: "TerminalOpenSSH", Route: "POST /api/panes/{paneId}/terminal/ssh", Status: http.StatusCreated}, func(ctx context.Context, a OpenSSHArgs) (terminal.TabInfo, error) {
		if err := pane(ctx, a.PaneID); err != nil {
			return terminal.TabInfo{}, err
		}
		tg, err := target(ctx, a.ServerID)
		if err != nil {
			return terminal.TabInfo{}, err
		}
		cols, rows := TerminalSizeArgs{Cols: a.Cols, Rows: a.Rows}.size()
		return terms.Open(ctx, terminal.Spec{PaneID: a.PaneID, Cols: cols, Rows: rows, SSH: &tg})
	})
	// ssh's own failures (the server cannot be reached) are 502: the fault is past this door.
	rpc.Add(t, rpc.Method{Name: "RemoteSessions", Route: "GET /api/ssh-servers/{id}/sessions"}, func(ctx context.Context, a IDArgs) (RemoteSessionsResult, error) {
		tg, err := target(ctx, a.ID)
		if err != nil {
			return RemoteSessionsResult{}, err
		}
		sessions, err := terms.RemoteSessions(ctx, tg)
		if err != nil {
			return RemoteSessionsResult{}, &StatusError{Status: http.StatusBadGateway, Err: err}
		}
		return RemoteSessionsResult{Sessions: sessions}, nil
	})
	rpc.Do(t, rpc.Method{Name: "KillRemoteSession", Route: "DELETE /api/ssh-servers/{id}/sessions/{name}"}, func(ctx context.Context, a RemoteSessionArgs) error {
		tg, err := target(ctx, a.ID)
		if err != nil {
			return err
		}
		if err := terms.KillRemoteSession(ctx, tg, a.Name); err != nil {
			return &StatusError{Status: http.StatusBadGateway, Err: err}
		}
		return nil
	})
}

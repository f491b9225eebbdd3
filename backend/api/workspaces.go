package api

import (
	"context"
	"net/http"

	"github.com/clusterspace/clusterspace/backend/panes"
	"github.com/clusterspace/clusterspace/backend/rpc"
	"github.com/clusterspace/clusterspace/backend/workspace"
)

// VersionResult is the build's version.
type VersionResult struct {
	Version string `json:"version"`
}

// CreateWorkspaceArgs: a name ("" picks "Workspace N"); rows and cols give it that grid
// (1-6 each, 2 when only the other is given), else the default 2 x 2.
type CreateWorkspaceArgs struct {
	Name string `json:"name"`
	Rows *int   `json:"rows,omitempty"`
	Cols *int   `json:"cols,omitempty"`
}

// ImportWorkspaceArgs is the text of a workspace export file.
type ImportWorkspaceArgs struct {
	Text string `json:"text"`
}

// WorkspaceArgs names a workspace.
type WorkspaceArgs struct {
	ID string `json:"id"`
}

// RenameWorkspaceArgs gives a workspace a new name.
type RenameWorkspaceArgs struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// DeleteWorkspaceArgs: force ends what busy panes hold (without it they are refused, 409).
type DeleteWorkspaceArgs struct {
	ID    string `json:"id"`
	Force bool   `json:"force,omitempty"`
}

// SetGridArgs resizes a workspace's grid; force ends what busy removed panes hold.
type SetGridArgs struct {
	ID    string `json:"id"`
	Rows  int    `json:"rows"`
	Cols  int    `json:"cols"`
	Force bool   `json:"force,omitempty"`
}

// SetWeightsArgs sets a workspace's row and column sizes.
type SetWeightsArgs struct {
	ID         string    `json:"id"`
	RowWeights []float64 `json:"rowWeights"`
	ColWeights []float64 `json:"colWeights"`
}

// SwapPanesArgs swaps two panes' cells.
type SwapPanesArgs struct {
	ID    string `json:"id"`
	PaneA string `json:"paneA"`
	PaneB string `json:"paneB"`
}

// PaneArgs names a pane of a workspace.
type PaneArgs struct {
	ID     string `json:"id"`
	PaneID string `json:"paneId"`
}

// UpdatePaneArgs changes a pane's kind and/or label (absent: unchanged).
type UpdatePaneArgs struct {
	ID     string          `json:"id"`
	PaneID string          `json:"paneId"`
	Kind   *workspace.Kind `json:"kind,omitempty"`
	Label  *string         `json:"label,omitempty"`
}

// ConvertPaneArgs turns a pane into the other kind.
type ConvertPaneArgs struct {
	ID     string               `json:"id"`
	PaneID string               `json:"paneId"`
	Req    panes.ConvertRequest `json:"req"`
}

// SetPaneLaunchArgs sets what a terminal pane runs (null: the person's shell); force restarts
// a pane whose terminal runs a command.
type SetPaneLaunchArgs struct {
	ID     string            `json:"id"`
	PaneID string            `json:"paneId"`
	Launch *workspace.Launch `json:"launch"`
	Force  bool              `json:"force,omitempty"`
}

func addWorkspaces(t *rpc.Table, s Services) {
	ws := s.Workspaces
	rpc.Add(t, rpc.Method{Name: "Version", Route: "GET /api/version"}, func(context.Context, rpc.None) (VersionResult, error) {
		return VersionResult{Version: s.Version}, nil
	})
	// A file picked in the UI, read as text: `serve` also takes the raw file at its REST route
	// POST /api/workspaces/import (hand-written in package server: its body is the file, not JSON
	// arguments).
	rpc.Add(t, rpc.Method{Name: "ImportWorkspace"}, func(ctx context.Context, a ImportWorkspaceArgs) (workspace.Workspace, error) {
		return ws.Import(ctx, []byte(a.Text))
	})
	rpc.Add(t, rpc.Method{Name: "ListWorkspaces", Route: "GET /api/workspaces"}, func(ctx context.Context, _ rpc.None) (workspace.List, error) {
		return ws.List(ctx)
	})
	rpc.Add(t, rpc.Method{Name: "CreateWorkspace", Route: "POST /api/workspaces", Status: http.StatusCreated}, func(ctx context.Context, a CreateWorkspaceArgs) (workspace.Workspace, error) {
		if a.Rows == nil && a.Cols == nil {
			return ws.Create(ctx, a.Name)
		}
		rows, cols := 2, 2
		if a.Rows != nil {
			rows = *a.Rows
		}
		if a.Cols != nil {
			cols = *a.Cols
		}
		return ws.CreateGrid(ctx, a.Name, rows, cols)
	})
	rpc.Add(t, rpc.Method{Name: "RenameWorkspace", Route: "PATCH /api/workspaces/{id}"}, func(ctx context.Context, a RenameWorkspaceArgs) (workspace.Workspace, error) {
		return ws.Rename(ctx, a.ID, a.Name)
	})
	rpc.Do(t, rpc.Method{Name: "DeleteWorkspace", Route: "DELETE /api/workspaces/{id}"}, func(ctx context.Context, a DeleteWorkspaceArgs) error {
		return ws.Delete(ctx, a.ID, a.Force)
	})
	rpc.Do(t, rpc.Method{Name: "ActivateWorkspace", Route: "POST /api/workspaces/{id}/activate"}, func(ctx context.Context, a WorkspaceArgs) error {
		return ws.Activate(ctx, a.ID)
	})
	rpc.Add(t, rpc.Method{Name: "SetGrid", Route: "PUT /api/workspaces/{id}/grid"}, func(ctx context.Context, a SetGridArgs) (workspace.Workspace, error) {
		return ws.SetGrid(ctx, a.ID, a.Rows, a.Cols, a.Force)
	})
	rpc.Add(t, rpc.Method{Name: "SetWeights", Route: "PUT /api/workspaces/{id}/weights"}, func(ctx context.Context, a SetWeightsArgs) (workspace.Workspace, error) {
		return ws.SetWeights(ctx, a.ID, a.RowWeights, a.ColWeights)
	})
	rpc.Add(t, rpc.Method{Name: "SwapPanes", Route: "POST /api/workspaces/{id}/swap"}, func(ctx context.Context, a SwapPanesArgs) (workspace.Workspace, error) {
		return ws.SwapPanes(ctx, a.ID, a.PaneA, a.PaneB)
	})
	rpc.Add(t, rpc.Method{Name: "UpdatePane", Route: "PATCH /api/workspaces/{id}/panes/{paneId}"}, func(ctx context.Context, a UpdatePaneArgs) (workspace.Workspace, error) {
		return ws.UpdatePane(ctx, a.ID, a.PaneID, workspace.PanePatch{Kind: a.Kind, Label: a.Label})
	})
	rpc.Add(t, rpc.Method{Name: "FocusPane", Route: "PUT /api/workspaces/{id}/focus"}, func(ctx context.Context, a PaneArgs) (workspace.Workspace, error) {
		if a.PaneID == "" {
			return workspace.Workspace{}, &rpc.ArgsError{Field: "paneId", Msg: "paneId: give the id of the pane to focus"}
		}
		return ws.Focus(ctx, a.ID, a.PaneID)
	})
	rpc.Add(t, rpc.Method{Name: "ToggleMaximizePane", Route: "POST /api/workspaces/{id}/panes/{paneId}/maximize"}, func(ctx context.Context, a PaneArgs) (workspace.Workspace, error) {
		return ws.ToggleMaximize(ctx, a.ID, a.PaneID)
	})
	rpc.Add(t, rpc.Method{Name: "ConvertPane", Route: "POST /api/workspaces/{id}/panes/{paneId}/convert", Body: "req"}, func(ctx context.Context, a ConvertPaneArgs) (workspace.Workspace, error) {
		return s.Panes.ConvertPane(ctx, a.ID, a.PaneID, a.Req)
	})
	rpc.Add(t, rpc.Method{Name: "SetPaneLaunch", Route: "PUT /api/workspaces/{id}/panes/{paneId}/launch", Body: "launch"}, func(ctx context.Context, a SetPaneLaunchArgs) (workspace.Workspace, error) {
		return s.Panes.SetLaunch(ctx, a.ID, a.PaneID, a.Launch, a.Force)
	})
	rpc.Add(t, rpc.Method{Name: "LaunchTemplates", Route: "GET /api/launch-templates"}, func(context.Context, rpc.None) ([]panes.TemplateInfo, error) {
		return s.Panes.Templates(), nil
	})
}

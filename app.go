package main

import (
	"context"
	"fmt"
	"os"
	"sync"

	"github.com/wailsapp/wails/v2/pkg/runtime"

	"github.com/clusterspace/clusterspace/backend/config"
	"github.com/clusterspace/clusterspace/backend/engine"
	"github.com/clusterspace/clusterspace/backend/panes"
	"github.com/clusterspace/clusterspace/backend/pubsub"
	"github.com/clusterspace/clusterspace/backend/workspace"
)

// backendEvent is the one Wails event name the frontend listens to; its payload is a
// pubsub.Envelope, the same shape the server sends over its WebSocket.
const backendEvent = "backend"

// App is what the desktop window's JavaScript can call (window.go.main.App). It stays thin:
// each method calls a backend service, and startup forwards the services' events.
type App struct {
	eng *engine.Engine
	ctx context.Context
	// relayCtx ends when the window closes: event relays and terminal views stop with it.
	relayCtx context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	// views are the terminal tabs and browser panes the window watches.
	views pubsub.Views
	// notifier shows desktop notifications: the webview offers pages none of its own.
	notifier desktopNotifier
	// softwareGraphics: the machine has no GPU render node (see SoftwareGraphics).
	softwareGraphics bool
}

// NewApp returns the App for an open engine.
func NewApp(eng *engine.Engine) *App {
	return &App{eng: eng}
}

// startup is called by Wails once the window exists; ctx is Wails' runtime context.
func (a *App) startup(ctx context.Context) {
	markGo("window-startup")
	a.ctx = ctx
	relayCtx, cancel := context.WithCancel(ctx)
	a.relayCtx, a.cancel = relayCtx, cancel
	for _, src := range a.eng.Sources() {
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			src(relayCtx, func(e pubsub.Envelope) { runtime.EventsEmit(ctx, backendEvent, e) })
		}()
	}
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		a.notifyGoals(relayCtx)
	}()
}

// domReady is called by Wails once the page's DOM is loaded (for the startup marks).
func (a *App) domReady(context.Context) { markGo("dom-ready") }

// shutdown is called by Wails when the window closes.
func (a *App) shutdown(context.Context) {
	if a.cancel != nil {
		a.cancel()
	}
	a.wg.Wait()
	a.views.StopAll()
	a.notifier.close()
}

// Version is the build's version string.
func (a *App) Version() string { return version }

// ListWorkspaces returns every workspace and the active one.
func (a *App) ListWorkspaces() (workspace.List, error) { return a.eng.Workspaces.List(a.ctx) }

// CreateWorkspace adds a workspace ("" picks a name) and makes it active.
func (a *App) CreateWorkspace(name string) (workspace.Workspace, error) {
	return a.eng.Workspaces.Create(a.ctx, name)
}

// CreateWorkspaceGrid adds a workspace of rows x cols terminal panes (1-6 each).
func (a *App) CreateWorkspaceGrid(name string, rows, cols int) (workspace.Workspace, error) {
	return a.eng.Workspaces.CreateGrid(a.ctx, name, rows, cols)
}

// FocusPane gives a pane the focus of its workspace (the agent reads it in list_panes).
func (a *App) FocusPane(id, paneID string) (workspace.Workspace, error) {
	return a.eng.Workspaces.Focus(a.ctx, id, paneID)
}

// ToggleMaximizePane shows a pane alone, or the whole grid again.
func (a *App) ToggleMaximizePane(id, paneID string) (workspace.Workspace, error) {
	return a.eng.Workspaces.ToggleMaximize(a.ctx, id, paneID)
}

// ConvertPane turns a pane into a browser or a terminal; a busy pane needs req.Force.
func (a *App) ConvertPane(id, paneID string, req panes.ConvertRequest) (workspace.Workspace, error) {
	return a.eng.Panes.ConvertPane(a.ctx, id, paneID, req)
}

// SetPaneLaunch sets what a terminal pane runs (nil: the shell) and restarts it; a busy
// pane needs force.
func (a *App) SetPaneLaunch(id, paneID string, launch *workspace.Launch, force bool) (workspace.Workspace, error) {
	return a.eng.Panes.SetLaunch(a.ctx, id, paneID, launch, force)
}

// LaunchTemplates lists the built-in pane launch templates and whether each is installed.
func (a *App) LaunchTemplates() []panes.TemplateInfo { return a.eng.Panes.Templates() }

// RenameWorkspace renames a workspace.
func (a *App) RenameWorkspace(id, name string) (workspace.Workspace, error) {
	return a.eng.Workspaces.Rename(a.ctx, id, name)
}

// DeleteWorkspace deletes a workspace (never the last one) and ends what its panes hold;
// with busy panes it refuses unless force (the person confirmed).
func (a *App) DeleteWorkspace(id string, force bool) error {
	return a.eng.Workspaces.Delete(a.ctx, id, force)
}

// ActivateWorkspace switches to a workspace.
func (a *App) ActivateWorkspace(id string) error { return a.eng.Workspaces.Activate(a.ctx, id) }

// SetGrid resizes a workspace's grid, ending what removed panes hold; with busy panes it
// refuses unless force (the person confirmed).
func (a *App) SetGrid(id string, rows, cols int, force bool) (workspace.Workspace, error) {
	return a.eng.Workspaces.SetGrid(a.ctx, id, rows, cols, force)
}

// SetWeights sets a workspace's row and column sizes.
func (a *App) SetWeights(id string, rowWeights, colWeights []float64) (workspace.Workspace, error) {
	return a.eng.Workspaces.SetWeights(a.ctx, id, rowWeights, colWeights)
}

// SwapPanes swaps two panes' cells.
func (a *App) SwapPanes(id, paneA, paneB string) (workspace.Workspace, error) {
	return a.eng.Workspaces.SwapPanes(a.ctx, id, paneA, paneB)
}

// UpdatePane changes a pane's kind and/or label; an empty string leaves that field as it is.
func (a *App) UpdatePane(id, paneID, kind, label string) (workspace.Workspace, error) {
	var patch workspace.PanePatch
	if kind != "" {
		k := workspace.Kind(kind)
		patch.Kind = &k
	}
	if label != "" {
		patch.Label = &label
	}
	return a.eng.Workspaces.UpdatePane(a.ctx, id, paneID, patch)
}

// ExportWorkspace asks where to save the workspace and writes it there. It returns the path,
// or "" if the user cancelled.
func (a *App) ExportWorkspace(id string) (string, error) {
	data, name, err := a.eng.Workspaces.Export(a.ctx, id)
	if err != nil {
		return "", err
	}
	path, err := runtime.SaveFileDialog(a.ctx, runtime.SaveDialogOptions{
		Title: "Export workspace", DefaultFilename: name,
		Filters: []runtime.FileFilter{{DisplayName: "ClusterSpace workspace (*.json)", Pattern: "*.json"}},
	})
	if err != nil || path == "" {
		return "", err
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return "", fmt.Errorf("could not save the export to %q: %w", path, err)
	}
	return path, nil
}

// ImportWorkspace adds a workspace from an export file's text and makes it active.
func (a *App) ImportWorkspace(data string) (workspace.Workspace, error) {
	return a.eng.Workspaces.Import(a.ctx, []byte(data))
}

// ListProviders returns the model providers (API keys masked) and the defaults.
func (a *App) ListProviders() (config.ProviderList, error) { return a.eng.Providers.List(a.ctx) }

// SaveProvider adds (id "") or edits a provider. apiKey nil keeps the stored key, "" removes it.
func (a *App) SaveProvider(id string, in config.ProviderInput) (config.Provider, error) {
	return a.eng.Providers.Save(a.ctx, id, in)
}

// DeleteProvider removes a provider and its key.
func (a *App) DeleteProvider(id string) error { return a.eng.Providers.Delete(a.ctx, id) }

// SetDefaultProviders picks the default provider for agents and for critics.
func (a *App) SetDefaultProviders(defaultID, criticID string) (config.ProviderList, error) {
	return a.eng.Providers.SetDefaults(a.ctx, defaultID, criticID)
}

// TestUnsavedProvider checks the add or edit form's values before they are saved (id: the
// provider being edited, "" when adding).
func (a *App) TestUnsavedProvider(id string, in config.ProviderInput) (config.TestResult, error) {
	return a.eng.Providers.TestUnsaved(a.ctx, id, in)
}

// TestProvider checks that a saved provider answers.
func (a *App) TestProvider(id string) (config.TestResult, error) {
	return a.eng.Providers.Test(a.ctx, id)
}

// DiscoverProviders looks for local model servers on host ("" = this machine).
func (a *App) DiscoverProviders(host string) ([]config.Discovered, error) {
	return config.Discover(a.ctx, host, nil)
}

// Prices returns the per-model price table (USD per million tokens).
func (a *App) Prices() (map[string]config.Price, error) { return a.eng.Providers.Prices(a.ctx) }

// SetPrices replaces the price table.
func (a *App) SetPrices(prices map[string]config.Price) error {
	return a.eng.Providers.SetPrices(a.ctx, prices)
}

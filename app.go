package main

import (
	"context"
	"fmt"
	"os"
	"sync"

	"github.com/clusterspace/clusterspace/backend/rpc"

	"github.com/wailsapp/wails/v2/pkg/runtime"

	"github.com/clusterspace/clusterspace/backend/engine"
	"github.com/clusterspace/clusterspace/backend/pubsub"
)

// backendEvent is the one Wails event name the frontend listens to; its payload is a
// pubsub.Envelope, the same shape the server sends over its WebSocket.
const backendEvent = "backend"

// App is what the desktop window's JavaScript can call (window.go.main.App). It stays thin:
// each method calls a backend service, and startup forwards the services' events.
type App struct {
	eng *engine.Engine
	// calls is the table of the UI's calls (package api), run by Call.
	calls *rpc.Table
	ctx   context.Context
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
	return &App{eng: eng, calls: apiTable(eng)}
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
	a.notifier.show = func() { runtime.WindowShow(ctx) }
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		a.notifyGoals(relayCtx)
	}()
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		a.notifyInbox(relayCtx)
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

package main

import (
	"context"

	"github.com/wailsapp/wails/v2/pkg/runtime"

	"github.com/clusterspace/clusterspace/backend/browser"
	"github.com/clusterspace/clusterspace/backend/pubsub"
)

// A browser pane's calls (open, tabs, navigate, …) are the table's (backend/api/browsers.go,
// run by App.Call); its screencast and input are streams, here.

// browserFrame is one screencast frame as the UI receives it ([]byte is base64 in JSON).
type browserFrame struct {
	PaneID string `json:"paneId"`
	browser.Frame
}

// BrowserWatch streams the pane's screencast as "browser"/"frame" events until BrowserUnwatch.
func (a *App) BrowserWatch(paneID string) error {
	started := make(chan error, 1)
	a.views.Start(a.relayCtx, "browser/"+paneID, func(ctx context.Context) {
		frames, err := a.eng.Browsers.StartScreencast(ctx, paneID)
		started <- err
		if err != nil {
			return
		}
		for f := range frames {
			runtime.EventsEmit(a.ctx, backendEvent, pubsub.Envelope{Topic: "browser", Type: "frame", Data: browserFrame{PaneID: paneID, Frame: f}})
		}
	})
	return <-started
}

// BrowserUnwatch stops the pane's screencast (the page keeps running).
func (a *App) BrowserUnwatch(paneID string) { a.views.Stop("browser/" + paneID) }

// BrowserInput forwards a mouse or keyboard event to the page as a trusted input event.
func (a *App) BrowserInput(paneID string, ev browser.InputEvent) error {
	return a.eng.Browsers.Input(paneID, ev)
}

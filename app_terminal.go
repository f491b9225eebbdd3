package main

import (
	"context"

	"github.com/wailsapp/wails/v2/pkg/runtime"

	"github.com/clusterspace/clusterspace/backend/pubsub"
)

// termOutput is one batch of a tab's output as the UI receives it ([]byte is base64 in JSON).
type termOutput struct {
	PaneID string `json:"paneId"`
	TabID  string `json:"tabId"`
	Data   []byte `json:"data"`
	Resync bool   `json:"resync,omitempty"`
}

// TerminalAttach returns the tab's scrollback and streams its output as "terminal"/"output"
// events until TerminalDetach (or the window closes).
func (a *App) TerminalAttach(paneID, tabID string) ([]byte, error) {
	type attached struct {
		replay []byte
		err    error
	}
	first := make(chan attached, 1)
	a.views.Start(a.relayCtx, paneID+"/"+tabID, func(ctx context.Context) {
		replay, out, err := a.eng.Terminals.Attach(ctx, paneID, tabID)
		first <- attached{replay, err}
		if err != nil {
			return
		}
		for chunk := range out {
			runtime.EventsEmit(a.ctx, backendEvent, pubsub.Envelope{Topic: "terminal", Type: "output",
				Data: termOutput{PaneID: paneID, TabID: tabID, Data: chunk.Data, Resync: chunk.Resync}})
		}
	})
	r := <-first
	return r.replay, r.err
}

// TerminalDetach stops forwarding a tab's output (the shell keeps running).
func (a *App) TerminalDetach(paneID, tabID string) { a.views.Stop(paneID + "/" + tabID) }

// TerminalInput sends typed text; a pane included in broadcast sends it to every included
// pane of the active workspace.
func (a *App) TerminalInput(paneID, tabID, data string) error {
	if a.eng.Terminals.Broadcasting(paneID) {
		return a.eng.Terminals.WriteBroadcast(paneID, a.eng.Workspaces.ActivePaneIDs(a.ctx), []byte(data))
	}
	return a.eng.Terminals.Write(paneID, tabID, []byte(data))
}

// TerminalResize follows the view's size.
func (a *App) TerminalResize(paneID, tabID string, cols, rows int) error {
	return a.eng.Terminals.Resize(paneID, tabID, cols, rows)
}

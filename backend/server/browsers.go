package server

// A browser pane's calls (open, tabs, navigate, …) are the table's (backend/api/browsers.go);
// its screencast and input stay on the WebSocket, here.

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/clusterspace/clusterspace/backend/browser"
	"github.com/clusterspace/clusterspace/backend/pubsub"
)

// browserMessage is a browser pane's message over the WebSocket.
type browserMessage struct {
	Type   string              `json:"type"` // browser.watch | browser.unwatch | browser.input
	PaneID string              `json:"paneId"`
	Event  *browser.InputEvent `json:"event,omitempty"`
}

// browserFrame is one screencast frame as the UI receives it (Data is base64 JPEG in JSON).
type browserFrame struct {
	PaneID string `json:"paneId"`
	browser.Frame
}

// handleBrowserClient acts on a browser message; each pane is one view of the connection.
func (s *Server) handleBrowserClient(ctx context.Context, raw []byte, views *pubsub.Views, send func(pubsub.Envelope)) {
	var m browserMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return // handleClient already parsed it as JSON
	}
	fail := func(err error) {
		send(pubsub.Envelope{Topic: "browser", Type: "error", Data: map[string]string{"paneId": m.PaneID, "error": err.Error()}})
	}
	key := "browser/" + m.PaneID
	switch m.Type {
	case "browser.watch":
		views.Start(ctx, key, func(vctx context.Context) {
			frames, err := s.deps.Browsers.StartScreencast(vctx, m.PaneID)
			if err != nil {
				fail(err)
				return
			}
			for f := range frames {
				send(pubsub.Envelope{Topic: "browser", Type: "frame", Data: browserFrame{PaneID: m.PaneID, Frame: f}})
			}
		})
	case "browser.unwatch":
		views.Stop(key)
	case "browser.input":
		if m.Event == nil {
			fail(errors.New("browser.input needs an event"))
			return
		}
		if err := s.deps.Browsers.Input(m.PaneID, *m.Event); err != nil {
			fail(err)
		}
	}
}

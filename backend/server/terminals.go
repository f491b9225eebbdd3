package server

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/clusterspace/clusterspace/backend/pubsub"
)

// clientMessage is what a UI sends over the WebSocket.
type clientMessage struct {
	Type   string `json:"type"` // term.attach | term.detach | term.input | term.resize
	PaneID string `json:"paneId"`
	TabID  string `json:"tabId"`
	Data   string `json:"data,omitempty"`
	Cols   int    `json:"cols,omitempty"`
	Rows   int    `json:"rows,omitempty"`
}

// terminalOutput is one batch of a tab's output as the UI receives it (Data is base64 in JSON).
type terminalOutput struct {
	PaneID string `json:"paneId"`
	TabID  string `json:"tabId"`
	Data   []byte `json:"data"`
	Resync bool   `json:"resync,omitempty"`
}

// handleClient acts on one message from the UI; send queues an envelope for the client.
func (s *Server) handleClient(ctx context.Context, raw []byte, views *pubsub.Views, send func(pubsub.Envelope)) {
	var m clientMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		send(pubsub.Envelope{Topic: "error", Type: "bad_message", Data: map[string]string{"error": "the message is not JSON: " + err.Error()}})
		return
	}
	fail := func(err error) {
		send(pubsub.Envelope{Topic: "terminal", Type: "error", Data: map[string]string{"paneId": m.PaneID, "tabId": m.TabID, "error": err.Error()}})
	}
	key := m.PaneID + "/" + m.TabID
	switch m.Type {
	case "term.attach":
		// The view owns the subscription: a detach or a re-attach ends it.
		views.Start(ctx, key, func(vctx context.Context) {
			replay, out, err := s.deps.Terminals.Attach(vctx, m.PaneID, m.TabID)
			if err != nil {
				fail(err)
				return
			}
			send(pubsub.Envelope{Topic: "terminal", Type: "replay", Data: terminalOutput{PaneID: m.PaneID, TabID: m.TabID, Data: replay}})
			for chunk := range out {
				send(pubsub.Envelope{Topic: "terminal", Type: "output", Data: terminalOutput{PaneID: m.PaneID, TabID: m.TabID, Data: chunk.Data, Resync: chunk.Resync}})
			}
		})
	case "term.detach":
		views.Stop(key)
	case "term.input":
		var err error
		if s.deps.Terminals.Broadcasting(m.PaneID) {
			err = s.deps.Terminals.WriteBroadcast(m.PaneID, s.deps.Workspaces.ActivePaneIDs(ctx), []byte(m.Data))
		} else {
			err = s.deps.Terminals.Write(m.PaneID, m.TabID, []byte(m.Data))
		}
		if err != nil {
			fail(err)
		}
	case "term.resize":
		if err := s.deps.Terminals.Resize(m.PaneID, m.TabID, m.Cols, m.Rows); err != nil {
			fail(err)
		}
	case "browser.watch", "browser.unwatch", "browser.input":
		s.handleBrowserClient(ctx, raw, views, send)
	default:
		send(pubsub.Envelope{Topic: "error", Type: "bad_message", Data: map[string]string{"error": fmt.Sprintf("unknown message type %q", m.Type)}})
	}
}

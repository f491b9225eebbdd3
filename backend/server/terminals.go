package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/clusterspace/clusterspace/backend/pubsub"
	"github.com/clusterspace/clusterspace/backend/terminal"
)

// Default terminal size until the view reports its own.
const (
	defaultCols = 80
	defaultRows = 24
)

type sizeBody struct {
	Cols int `json:"cols"`
	Rows int `json:"rows"`
}

func (b sizeBody) orDefault() (int, int) {
	c, r := b.Cols, b.Rows
	if c <= 0 {
		c = defaultCols
	}
	if r <= 0 {
		r = defaultRows
	}
	return c, r
}

func (s *Server) terminalPane(w http.ResponseWriter, r *http.Request) (string, bool) {
	pane := r.PathValue("paneId")
	// Terminals start only for panes that exist, never for an id a client made up.
	if !s.deps.Workspaces.HasPane(r.Context(), pane) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no pane %q in any workspace", pane), "")
		return "", false
	}
	return pane, true
}

func writeTerminalError(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, terminal.ErrNoPane), errors.Is(err, terminal.ErrNoTab):
		writeError(w, http.StatusNotFound, err.Error(), "")
	case errors.Is(err, terminal.ErrBadSize):
		writeError(w, http.StatusBadRequest, err.Error(), "cols")
	default:
		writeServiceError(w, err)
	}
}

func (s *Server) openTerminal(w http.ResponseWriter, r *http.Request) {
	pane, ok := s.terminalPane(w, r)
	if !ok {
		return
	}
	var body sizeBody
	if !decodeBody(w, r, &body) {
		return
	}
	cols, rows := body.orDefault()
	if _, err := s.deps.Panes.EnsureTerminal(r.Context(), pane, cols, rows); err != nil {
		writeTerminalError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"tabs": s.deps.Terminals.Tabs(pane)})
}

func (s *Server) newTerminalTab(w http.ResponseWriter, r *http.Request) {
	pane, ok := s.terminalPane(w, r)
	if !ok {
		return
	}
	var body sizeBody
	if !decodeBody(w, r, &body) {
		return
	}
	cols, rows := body.orDefault()
	tab, err := s.deps.Terminals.Open(r.Context(), terminal.Spec{PaneID: pane, Cols: cols, Rows: rows})
	if err != nil {
		writeTerminalError(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, tab)
}

func (s *Server) terminalTabs(w http.ResponseWriter, r *http.Request) {
	pane, ok := s.terminalPane(w, r)
	if !ok {
		return
	}
	tabs := s.deps.Terminals.Tabs(pane)
	if tabs == nil {
		tabs = []terminal.TabInfo{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"tabs": tabs})
}

// tabAction runs one action on a tab and answers 204.
func (s *Server) tabAction(act func(ctx context.Context, pane, tab string) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		pane, ok := s.terminalPane(w, r)
		if !ok {
			return
		}
		if err := act(r.Context(), pane, r.PathValue("tabId")); err != nil {
			writeTerminalError(w, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}
}

func (s *Server) setBroadcast(w http.ResponseWriter, r *http.Request) {
	pane, ok := s.terminalPane(w, r)
	if !ok {
		return
	}
	var body struct {
		Include bool `json:"include"`
	}
	if !decodeBody(w, r, &body) {
		return
	}
	s.deps.Terminals.SetBroadcast(pane, body.Include)
	w.WriteHeader(http.StatusNoContent)
}

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

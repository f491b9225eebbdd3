package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/clusterspace/clusterspace/backend/browser"
	"github.com/clusterspace/clusterspace/backend/pubsub"
)

// browserPane checks that the pane exists and returns it with its workspace (each workspace
// has its own browser profile).
func (s *Server) browserPane(w http.ResponseWriter, r *http.Request) (pane, ws string, ok bool) {
	pane = r.PathValue("paneId")
	ws, ok = s.deps.Workspaces.WorkspaceOf(r.Context(), pane)
	if !ok {
		writeError(w, http.StatusNotFound, "no pane \""+pane+"\" in any workspace", "")
	}
	return pane, ws, ok
}

func writeBrowserError(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, browser.ErrNoPane), errors.Is(err, browser.ErrNoTab):
		writeError(w, http.StatusNotFound, err.Error(), "")
	case errors.Is(err, browser.ErrNoHistory):
		writeError(w, http.StatusConflict, err.Error(), "")
	case errors.As(err, new(*browser.PageError)):
		writeError(w, http.StatusConflict, err.Error(), "")
	default:
		// Chromium missing, crashed, or a page that would not load: the browser side failed.
		writeError(w, http.StatusBadGateway, err.Error(), "")
	}
}

type urlBody struct {
	URL    string `json:"url"`
	Width  int    `json:"width"`
	Height int    `json:"height"`
}

// openBrowser gives the pane a browser tab (at url, or a blank page) if it has none, and
// returns its tabs.
func (s *Server) openBrowser(w http.ResponseWriter, r *http.Request) {
	pane, ws, ok := s.browserPane(w, r)
	if !ok {
		return
	}
	var body urlBody
	if !decodeBody(w, r, &body) {
		return
	}
	if _, _, err := s.deps.Browsers.Ensure(r.Context(), pane, ws, body.URL); err != nil {
		writeBrowserError(w, err)
		return
	}
	if body.Width > 0 && body.Height > 0 {
		s.deps.Browsers.SetViewport(pane, body.Width, body.Height) // Best effort: the view sends its size again.
	}
	writeJSON(w, http.StatusOK, map[string]any{"tabs": s.deps.Browsers.Tabs(pane)})
}

func (s *Server) browserNewTab(w http.ResponseWriter, r *http.Request) {
	pane, _, ok := s.browserPane(w, r)
	if !ok {
		return
	}
	var body urlBody
	if !decodeBody(w, r, &body) {
		return
	}
	tab, err := s.deps.Browsers.NewTab(r.Context(), pane, body.URL)
	if err != nil {
		writeBrowserError(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, tab)
}

func (s *Server) browserTabs(w http.ResponseWriter, r *http.Request) {
	pane, _, ok := s.browserPane(w, r)
	if !ok {
		return
	}
	tabs := s.deps.Browsers.Tabs(pane)
	if tabs == nil {
		tabs = []browser.TabInfo{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"tabs": tabs})
}

func (s *Server) browserCloseTab(w http.ResponseWriter, r *http.Request) {
	pane, _, ok := s.browserPane(w, r)
	if !ok {
		return
	}
	if err := s.deps.Browsers.CloseTab(pane, r.PathValue("tabId")); err != nil {
		writeBrowserError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) browserActivate(w http.ResponseWriter, r *http.Request) {
	pane, _, ok := s.browserPane(w, r)
	if !ok {
		return
	}
	tab, err := s.deps.Browsers.Activate(r.Context(), pane, r.PathValue("tabId"))
	if err != nil {
		writeBrowserError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, tab)
}

// browserPageAction runs a navigation (navigate, back, forward, reload) and returns the page.
func (s *Server) browserPageAction(act func(ctx context.Context, pane string, body urlBody) (browser.PageInfo, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		pane, _, ok := s.browserPane(w, r)
		if !ok {
			return
		}
		var body urlBody
		if r.ContentLength != 0 && !decodeBody(w, r, &body) {
			return
		}
		page, err := act(r.Context(), pane, body)
		if err != nil {
			writeBrowserError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, page)
	}
}

func (s *Server) browserViewport(w http.ResponseWriter, r *http.Request) {
	pane, _, ok := s.browserPane(w, r)
	if !ok {
		return
	}
	var body urlBody
	if !decodeBody(w, r, &body) {
		return
	}
	if err := s.deps.Browsers.SetViewport(pane, body.Width, body.Height); err != nil {
		writeError(w, http.StatusBadRequest, err.Error(), "width")
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) browserReconnect(w http.ResponseWriter, r *http.Request) {
	pane, _, ok := s.browserPane(w, r)
	if !ok {
		return
	}
	tab, err := s.deps.Browsers.Reconnect(r.Context(), pane)
	if err != nil {
		writeBrowserError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, tab)
}

func (s *Server) browserRoutes() []route {
	nav := func(f func(ctx context.Context, pane string, b urlBody) (browser.PageInfo, error)) http.HandlerFunc {
		return s.browserPageAction(f)
	}
	return []route{
		{"POST", "/api/panes/{paneId}/browser", false, s.openBrowser},
		{"GET", "/api/panes/{paneId}/browser/tabs", false, s.browserTabs},
		{"POST", "/api/panes/{paneId}/browser/tabs", false, s.browserNewTab},
		{"DELETE", "/api/panes/{paneId}/browser/tabs/{tabId}", false, s.browserCloseTab},
		{"POST", "/api/panes/{paneId}/browser/tabs/{tabId}/activate", false, s.browserActivate},
		{"POST", "/api/panes/{paneId}/browser/navigate", false, nav(func(ctx context.Context, p string, b urlBody) (browser.PageInfo, error) {
			return s.deps.Browsers.Navigate(ctx, p, b.URL)
		})},
		{"POST", "/api/panes/{paneId}/browser/back", false, nav(func(ctx context.Context, p string, _ urlBody) (browser.PageInfo, error) {
			return s.deps.Browsers.Back(ctx, p)
		})},
		{"POST", "/api/panes/{paneId}/browser/forward", false, nav(func(ctx context.Context, p string, _ urlBody) (browser.PageInfo, error) {
			return s.deps.Browsers.Forward(ctx, p)
		})},
		{"POST", "/api/panes/{paneId}/browser/reload", false, nav(func(ctx context.Context, p string, _ urlBody) (browser.PageInfo, error) {
			return s.deps.Browsers.Reload(ctx, p)
		})},
		{"PUT", "/api/panes/{paneId}/browser/viewport", false, s.browserViewport},
		{"POST", "/api/panes/{paneId}/browser/reconnect", false, s.browserReconnect},
		{"POST", "/api/panes/{paneId}/browser/prompt", false, s.browserAnswerPrompt},
	}
}

// browserAnswerPrompt answers the question the pane's page asks (HTTP auth, a bad
// certificate). The password goes to the page and nowhere else.
func (s *Server) browserAnswerPrompt(w http.ResponseWriter, r *http.Request) {
	var a browser.PromptAnswer
	if !decodeBody(w, r, &a) {
		return
	}
	if err := s.deps.Browsers.AnswerPrompt(r.Context(), r.PathValue("paneId"), a); err != nil {
		writeBrowserError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

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

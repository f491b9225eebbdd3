package server

import (
	"net/http"

	"github.com/clusterspace/clusterspace/backend/panes"
	"github.com/clusterspace/clusterspace/backend/workspace"
)

// The pane controls the window shares with the agent's tools: focus, maximize, convert, launch
// settings and the launch templates (see backend/panes).
func (s *Server) paneRoutes() []route {
	return []route{
		{"PUT", "/api/workspaces/{id}/focus", false, s.focusPane},
		{"POST", "/api/workspaces/{id}/panes/{paneId}/maximize", false, s.maximizePane},
		{"POST", "/api/workspaces/{id}/panes/{paneId}/convert", false, s.convertPane},
		{"PUT", "/api/workspaces/{id}/panes/{paneId}/launch", false, s.setPaneLaunch},
		{"GET", "/api/launch-templates", false, s.launchTemplates},
	}
}

func (s *Server) focusPane(w http.ResponseWriter, r *http.Request) {
	var body struct {
		PaneID string `json:"paneId"`
	}
	if !decodeBody(w, r, &body) {
		return
	}
	if body.PaneID == "" {
		writeError(w, http.StatusBadRequest, "paneId: give the id of the pane to focus", "paneId")
		return
	}
	ws, err := s.deps.Workspaces.Focus(r.Context(), r.PathValue("id"), body.PaneID)
	respond(w, http.StatusOK, ws, err)
}

func (s *Server) maximizePane(w http.ResponseWriter, r *http.Request) {
	ws, err := s.deps.Workspaces.ToggleMaximize(r.Context(), r.PathValue("id"), r.PathValue("paneId"))
	respond(w, http.StatusOK, ws, err)
}

func (s *Server) convertPane(w http.ResponseWriter, r *http.Request) {
	var req panes.ConvertRequest
	if !decodeBody(w, r, &req) {
		return
	}
	ws, err := s.deps.Panes.ConvertPane(r.Context(), r.PathValue("id"), r.PathValue("paneId"), req)
	respond(w, http.StatusOK, ws, err)
}

// setPaneLaunch takes launch settings, or null for the plain shell; ?force=true restarts a
// pane whose terminal runs a command (else 409 naming it, as convert does).
func (s *Server) setPaneLaunch(w http.ResponseWriter, r *http.Request) {
	var launch *workspace.Launch
	if !decodeBody(w, r, &launch) {
		return
	}
	force := r.URL.Query().Get("force") == "true"
	ws, err := s.deps.Panes.SetLaunch(r.Context(), r.PathValue("id"), r.PathValue("paneId"), launch, force)
	respond(w, http.StatusOK, ws, err)
}

func (s *Server) launchTemplates(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.deps.Panes.Templates())
}

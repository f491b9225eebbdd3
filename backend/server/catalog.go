package server

import (
	"errors"
	"net/http"

	"github.com/clusterspace/clusterspace/backend/catalog"
)

// The configuration layer (backend/catalog): personas, skills, task and pane templates, the
// problems with the config dir's files, and where they are. Under serve "open" shows the path:
// the files are on the server's machine, not the browser's.
func (s *Server) catalogRoutes() []route {
	return []route{
		{"GET", "/api/catalog", false, s.getCatalog},
		{"POST", "/api/catalog/tasks/{id}/render", false, s.renderTask},
		{"POST", "/api/catalog/path", false, s.catalogPath},
		{"POST", "/api/catalog/customize", false, s.customizeCatalog},
	}
}

func (s *Server) getCatalog(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.deps.Catalog.List())
}

func (s *Server) renderTask(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Params map[string]string `json:"params"`
	}
	if !decodeBody(w, r, &body) {
		return
	}
	out, err := s.deps.Catalog.RenderTask(r.PathValue("id"), body.Params)
	if err != nil {
		writeCatalogError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

type catalogItem struct {
	Kind string `json:"kind"`
	ID   string `json:"id,omitempty"`
}

func (s *Server) catalogPath(w http.ResponseWriter, r *http.Request) {
	var body catalogItem
	if !decodeBody(w, r, &body) {
		return
	}
	path, err := s.deps.Catalog.PathFor(body.Kind, body.ID)
	if err != nil {
		writeCatalogError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"path": path, "opened": false})
}

func (s *Server) customizeCatalog(w http.ResponseWriter, r *http.Request) {
	var body catalogItem
	if !decodeBody(w, r, &body) {
		return
	}
	path, err := s.deps.Catalog.Customize(body.Kind, body.ID)
	if err != nil {
		writeCatalogError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"path": path})
}

// writeCatalogError answers a person's mistake (an unknown id, an empty parameter) with 400
// naming the field, anything else as the service errors are.
func writeCatalogError(w http.ResponseWriter, err error) {
	var le *catalog.LookupError
	var pe *catalog.ParamError
	var fe *catalog.FieldError
	switch {
	case errors.As(err, &le):
		writeError(w, http.StatusBadRequest, err.Error(), le.Field)
	case errors.As(err, &pe):
		writeError(w, http.StatusBadRequest, err.Error(), "params."+pe.Param)
	case errors.As(err, &fe):
		writeError(w, http.StatusBadRequest, err.Error(), fe.Field)
	default:
		writeServiceError(w, err)
	}
}

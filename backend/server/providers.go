package server

import (
	"net/http"

	"github.com/clusterspace/clusterspace/backend/config"
)

func (s *Server) listProviders(w http.ResponseWriter, r *http.Request) {
	list, err := s.deps.Providers.List(r.Context())
	respond(w, http.StatusOK, list, err)
}

func (s *Server) createProvider(w http.ResponseWriter, r *http.Request) {
	var in config.ProviderInput
	if !decodeBody(w, r, &in) {
		return
	}
	p, err := s.deps.Providers.Save(r.Context(), "", in)
	respond(w, http.StatusCreated, p, err)
}

func (s *Server) updateProvider(w http.ResponseWriter, r *http.Request) {
	var in config.ProviderInput
	if !decodeBody(w, r, &in) {
		return
	}
	p, err := s.deps.Providers.Save(r.Context(), r.PathValue("id"), in)
	respond(w, http.StatusOK, p, err)
}

func (s *Server) deleteProvider(w http.ResponseWriter, r *http.Request) {
	if err := s.deps.Providers.Delete(r.Context(), r.PathValue("id")); err != nil {
		writeServiceError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) setProviderDefaults(w http.ResponseWriter, r *http.Request) {
	var body struct {
		DefaultID       string `json:"defaultId"`
		CriticDefaultID string `json:"criticDefaultId"`
	}
	if !decodeBody(w, r, &body) {
		return
	}
	list, err := s.deps.Providers.SetDefaults(r.Context(), body.DefaultID, body.CriticDefaultID)
	respond(w, http.StatusOK, list, err)
}

func (s *Server) testProvider(w http.ResponseWriter, r *http.Request) {
	res, err := s.deps.Providers.Test(r.Context(), r.PathValue("id"))
	respond(w, http.StatusOK, res, err)
}

// testUnsavedProvider tests the add or edit form's values before they are saved; ?id= names
// the provider being edited, whose stored key is used unless the body gives one.
func (s *Server) testUnsavedProvider(w http.ResponseWriter, r *http.Request) {
	var in config.ProviderInput
	if !decodeBody(w, r, &in) {
		return
	}
	res, err := s.deps.Providers.TestUnsaved(r.Context(), r.URL.Query().Get("id"), in)
	respond(w, http.StatusOK, res, err)
}

func (s *Server) discoverProviders(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Host string `json:"host"`
	}
	if !decodeBody(w, r, &body) {
		return
	}
	found, err := config.Discover(r.Context(), body.Host, nil)
	if found == nil {
		found = []config.Discovered{}
	}
	respond(w, http.StatusOK, map[string]any{"servers": found}, err)
}

func (s *Server) getPrices(w http.ResponseWriter, r *http.Request) {
	prices, err := s.deps.Providers.Prices(r.Context())
	respond(w, http.StatusOK, map[string]any{"prices": prices}, err)
}

func (s *Server) setPrices(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Prices map[string]config.Price `json:"prices"`
	}
	if !decodeBody(w, r, &body) {
		return
	}
	if err := s.deps.Providers.SetPrices(r.Context(), body.Prices); err != nil {
		writeServiceError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

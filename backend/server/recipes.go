package server

import (
	"errors"
	"net/http"

	"github.com/clusterspace/clusterspace/backend/recipes"
)

// recipeRoutes are the browser recipes: listed and run from a browser pane's menu, saved and
// deleted by the person (the agent saves through browser_save_recipe).
func (s *Server) recipeRoutes() []route {
	if s.deps.Recipes == nil {
		return nil
	}
	return []route{
		{"GET", "/api/recipes", false, s.listRecipes},
		{"POST", "/api/recipes", false, s.saveRecipe},
		{"DELETE", "/api/recipes/{name}", false, s.deleteRecipe},
		{"POST", "/api/recipes/{name}/run", false, s.runRecipe},
	}
}

func (s *Server) listRecipes(w http.ResponseWriter, r *http.Request) {
	list, err := s.deps.Recipes.List(r.Context())
	respond(w, http.StatusOK, map[string]any{"recipes": list}, err)
}

func (s *Server) saveRecipe(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Name        string         `json:"name"`
		Description string         `json:"description"`
		Steps       []recipes.Step `json:"steps"`
	}
	if !decodeBody(w, r, &body) {
		return
	}
	rec, err := s.deps.Recipes.Save(r.Context(), recipes.Recipe{Name: body.Name, Description: body.Description, Steps: body.Steps})
	s.recipeRespond(w, http.StatusCreated, rec, err)
}

func (s *Server) deleteRecipe(w http.ResponseWriter, r *http.Request) {
	if err := s.deps.Recipes.Delete(r.Context(), r.PathValue("name")); err != nil {
		s.recipeRespond(w, 0, nil, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// runRecipe runs a recipe the person started from a pane's menu, in that pane.
func (s *Server) runRecipe(w http.ResponseWriter, r *http.Request) {
	var body struct {
		PaneID string            `json:"paneId"`
		Params map[string]string `json:"params"`
	}
	if !decodeBody(w, r, &body) {
		return
	}
	res, err := s.deps.Recipes.RunByPerson(r.Context(), r.PathValue("name"), body.PaneID, body.Params)
	s.recipeRespond(w, http.StatusOK, res, err)
}

func (s *Server) recipeRespond(w http.ResponseWriter, status int, v any, err error) {
	var fe *recipes.FieldError
	switch {
	case errors.As(err, &fe):
		writeError(w, http.StatusBadRequest, err.Error(), fe.Field)
	case errors.Is(err, recipes.ErrNotFound):
		writeError(w, http.StatusNotFound, err.Error(), "name")
	default:
		respond(w, status, v, err)
	}
}

package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/clusterspace/clusterspace/backend/recipes"
	"github.com/clusterspace/clusterspace/backend/rpc"
)

// SaveRecipeArgs is a recipe as the person saves it (replacing one of the same name); its
// params are read from its steps.
type SaveRecipeArgs struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Steps       []recipes.Step `json:"steps"`
}

// RecipeArgs names a recipe.
type RecipeArgs struct {
	Name string `json:"name"`
}

// RunRecipeArgs runs a recipe the person started from a browser pane's menu, in that pane,
// with a value for each of its params.
type RunRecipeArgs struct {
	Name   string            `json:"name"`
	PaneID string            `json:"paneId"`
	Params map[string]string `json:"params,omitempty"`
}

// RecipesResult is the saved recipes.
type RecipesResult struct {
	Recipes []recipes.Recipe `json:"recipes"`
}

var errRecipesOff = &StatusError{Status: http.StatusServiceUnavailable, Err: errors.New("browser recipes are not available in this server; a server started by `clusterspace serve` has them")}

// recipeError names the field a recipe or a run got wrong (400), or the recipe that is not
// there (404).
func recipeError(err error) error {
	return featureError(err, namesField(func(e *recipes.FieldError) string { return e.Field }), recipes.ErrNotFound, "name")
}

// addRecipes declares the browser recipes: listed and run from a browser pane's menu, saved
// and deleted by the person (the agent saves through browser_save_recipe).
func addRecipes(t *rpc.Table, s Services) {
	r := s.Recipes
	rpc.Add(t, rpc.Method{Name: "ListRecipes", Route: "GET /api/recipes"}, ifOn(r != nil, errRecipesOff, func(ctx context.Context, _ rpc.None) (RecipesResult, error) {
		list, err := r.List(ctx)
		return RecipesResult{Recipes: list}, recipeError(err)
	}))
	rpc.Add(t, rpc.Method{Name: "SaveRecipe", Route: "POST /api/recipes", Status: http.StatusCreated}, ifOn(r != nil, errRecipesOff, func(ctx context.Context, a SaveRecipeArgs) (recipes.Recipe, error) {
		rec, err := r.Save(ctx, recipes.Recipe{Name: a.Name, Description: a.Description, Steps: a.Steps})
		return rec, recipeError(err)
	}))
	rpc.Do(t, rpc.Method{Name: "DeleteRecipe", Route: "DELETE /api/recipes/{name}"}, doIfOn(r != nil, errRecipesOff, func(ctx context.Context, a RecipeArgs) error {
		return recipeError(r.Delete(ctx, a.Name))
	}))
	rpc.Add(t, rpc.Method{Name: "RunRecipe", Route: "POST /api/recipes/{name}/run"}, ifOn(r != nil, errRecipesOff, func(ctx context.Context, a RunRecipeArgs) (recipes.RunResult, error) {
		res, err := r.RunByPerson(ctx, a.Name, a.PaneID, a.Params)
		return res, recipeError(err)
	}))
}

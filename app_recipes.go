package main

import "github.com/clusterspace/clusterspace/backend/recipes"

// ListRecipes returns the saved browser recipes.
func (a *App) ListRecipes() ([]recipes.Recipe, error) { return a.eng.Recipes.List(a.ctx) }

// SaveRecipe saves a recipe (replacing one of the same name), checking every step.
func (a *App) SaveRecipe(r recipes.Recipe) (recipes.Recipe, error) {
	return a.eng.Recipes.Save(a.ctx, r)
}

// DeleteRecipe removes a recipe.
func (a *App) DeleteRecipe(name string) error { return a.eng.Recipes.Delete(a.ctx, name) }

// RunRecipe runs a recipe the person started from a browser pane's menu, in that pane.
func (a *App) RunRecipe(name, paneID string, params map[string]string) (recipes.RunResult, error) {
	return a.eng.Recipes.RunByPerson(a.ctx, name, paneID, params)
}

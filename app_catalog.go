package main

import (
	"context"
	"fmt"
	"os/exec"
	"time"

	"github.com/clusterspace/clusterspace/backend/catalog"
)

// openTimeout bounds xdg-open: it hands the path to the file manager and returns at once;
// one that hangs must not hold the call.
const openTimeout = 10 * time.Second

// Catalog lists the personas, skills, task and pane templates, their folders and the problems
// with the config dir's files.
func (a *App) Catalog() catalog.Listing { return a.eng.Catalog.List() }

// RenderTaskTemplate fills a task template's parameters; an empty one is refused naming it.
func (a *App) RenderTaskTemplate(id string, params map[string]string) (catalog.Rendered, error) {
	return a.eng.Catalog.RenderTask(id, params)
}

// CatalogPath is where a folder or file is, and whether the desktop opened it.
type CatalogPath struct {
	Path    string `json:"path"`
	Opened  bool   `json:"opened"`
	Message string `json:"message,omitempty"`
}

// OpenCatalogPath opens a kind's folder (id "") or an item's file in the desktop's default
// application; the path comes back either way, so the window can show it when nothing opens.
func (a *App) OpenCatalogPath(kind, id string) (CatalogPath, error) {
	path, err := a.eng.Catalog.PathFor(kind, id)
	if err != nil {
		return CatalogPath{}, err
	}
	ctx, cancel := context.WithTimeout(a.ctx, openTimeout)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "xdg-open", path).CombinedOutput(); err != nil {
		return CatalogPath{Path: path, Message: fmt.Sprintf("xdg-open could not open it (%v %s)", err, out)}, nil
	}
	return CatalogPath{Path: path, Opened: true}, nil
}

// CustomizeCatalogItem copies a built-in into the config dir to edit it, returning its path.
func (a *App) CustomizeCatalogItem(kind, id string) (string, error) {
	return a.eng.Catalog.Customize(kind, id)
}

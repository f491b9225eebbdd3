package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"time"

	"github.com/clusterspace/clusterspace/backend/api"
)

// openTimeout bounds xdg-open: it hands the path to the file manager and returns at once;
// one that hangs must not hold the call.
const openTimeout = 10 * time.Second

// The catalog's calls are the table's (backend/api, through App.Call); opening a folder or
// file in the desktop's default application is the window's own.

// OpenCatalogPath opens a kind's folder (id "") or an item's file in the desktop's default
// application; the path comes back either way, so the window can show it when nothing opens.
// A refusal (an unknown kind or id) rejects as App.Call's do, with the JSON of api.ErrorBody.
func (a *App) OpenCatalogPath(kind, id string) (api.CatalogPath, error) {
	args, _ := json.Marshal(api.CatalogItemArgs{Kind: kind, ID: id})
	res, err := a.Call("CatalogPath", args)
	if err != nil {
		return api.CatalogPath{}, err
	}
	var out api.CatalogPath
	if err := json.Unmarshal(res, &out); err != nil {
		return api.CatalogPath{}, err
	}
	ctx, cancel := context.WithTimeout(a.ctx, openTimeout)
	defer cancel()
	if msg, err := exec.CommandContext(ctx, "xdg-open", out.Path).CombinedOutput(); err != nil {
		out.Message = fmt.Sprintf("xdg-open could not open it (%v %s)", err, msg)
		return out, nil
	}
	out.Opened = true
	return out, nil
}

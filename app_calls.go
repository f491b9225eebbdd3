package main

import (
	"encoding/json"
	"errors"

	"github.com/clusterspace/clusterspace/backend/api"
	"github.com/clusterspace/clusterspace/backend/engine"
	"github.com/clusterspace/clusterspace/backend/rpc"
)

// apiTable declares the UI's calls over the engine's services (package api); the desktop window
// and `serve` build it the same way.
func apiTable(eng *engine.Engine) *rpc.Table {
	return api.New(api.ForEngine(eng, version))
}

// Call runs one call of the table for the window: the same names, arguments and results as
// `serve`'s POST /api/rpc/{name}. A refusal rejects the window's promise with the JSON of
// api.ErrorBody, so the UI learns the field and the busy panes as it does over HTTP.
func (a *App) Call(name string, args json.RawMessage) (json.RawMessage, error) {
	res, err := a.calls.Call(a.ctx, name, args)
	if err != nil {
		_, body := api.Classify(err)
		b, _ := json.Marshal(body)
		return nil, errors.New(string(b))
	}
	return res, nil
}

package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/clusterspace/clusterspace/backend/catalog"
	"github.com/clusterspace/clusterspace/backend/rpc"
)

// RenderTaskTemplateArgs fills a task template's parameters (the New Goal dialog's "From
// template"); an empty one is refused naming params.NAME.
type RenderTaskTemplateArgs struct {
	ID     string            `json:"id"`
	Params map[string]string `json:"params"`
}

// CatalogItemArgs names a kind's folder (id "") or one item of the catalog.
type CatalogItemArgs struct {
	Kind string `json:"kind"`
	ID   string `json:"id,omitempty"`
}

// CatalogPath is where a folder or file is, and whether the desktop opened it (the table
// only says where: the files are on the engine's machine; the desktop opens them itself).
type CatalogPath struct {
	Path    string `json:"path"`
	Opened  bool   `json:"opened"`
	Message string `json:"message,omitempty"`
}

// CustomizedItem is the file a built-in was copied to, to be edited.
type CustomizedItem struct {
	Path string `json:"path"`
}

var errCatalogOff = &StatusError{Status: http.StatusServiceUnavailable, Err: errors.New("the catalog is not loaded in this server; a server started by `clusterspace serve` loads it from the config dir")}

// catalogError answers a person's mistake (an unknown id or kind, an empty parameter) with 400
// naming the field; anything else is classified as every call's errors are.
func catalogError(err error) error {
	var le *catalog.LookupError
	var pe *catalog.ParamError
	var fe *catalog.FieldError
	switch {
	case errors.As(err, &le):
		return &StatusError{Status: http.StatusBadRequest, Field: le.Field, Err: err}
	case errors.As(err, &pe):
		return &StatusError{Status: http.StatusBadRequest, Field: "params." + pe.Param, Err: err}
	case errors.As(err, &fe):
		return &StatusError{Status: http.StatusBadRequest, Field: fe.Field, Err: err}
	}
	return err
}

func addCatalog(t *rpc.Table, s Services) {
	c := s.Catalog
	rpc.Add(t, rpc.Method{Name: "Catalog", Route: "GET /api/catalog"}, ifOn(c != nil, errCatalogOff, func(ctx context.Context, _ rpc.None) (catalog.Listing, error) {
		return c.List(), nil
	}))
	rpc.Add(t, rpc.Method{Name: "RenderTaskTemplate", Route: "POST /api/catalog/tasks/{id}/render"}, ifOn(c != nil, errCatalogOff, func(ctx context.Context, a RenderTaskTemplateArgs) (catalog.Rendered, error) {
		out, err := c.RenderTask(a.ID, a.Params)
		return out, catalogError(err)
	}))
	rpc.Add(t, rpc.Method{Name: "CatalogPath", Route: "POST /api/catalog/path"}, ifOn(c != nil, errCatalogOff, func(ctx context.Context, a CatalogItemArgs) (CatalogPath, error) {
		path, err := c.PathFor(a.Kind, a.ID)
		return CatalogPath{Path: path}, catalogError(err)
	}))
	rpc.Add(t, rpc.Method{Name: "CustomizeCatalogItem", Route: "POST /api/catalog/customize"}, ifOn(c != nil, errCatalogOff, func(ctx context.Context, a CatalogItemArgs) (CustomizedItem, error) {
		path, err := c.Customize(a.Kind, a.ID)
		return CustomizedItem{Path: path}, catalogError(err)
	}))
}

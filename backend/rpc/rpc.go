// Package rpc is the one table of calls between the UI and the engine. Each call is declared
// once, in Go, with a name, a struct of JSON arguments and a result; both doors serve that
// table: the desktop window through one Wails binding (App.Call) and `clusterspace serve` at
// POST /api/rpc/{name} (and, where a call has one, at its documented REST route). The
// TypeScript client's types are generated from the same table (see package apigen), so a call
// is written once in Go and once, by machine, in TypeScript.
package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	jsonv1 "github.com/go-json-experiment/json/v1"
)

// wireOptions encode results as encoding/json does, except that nil slices and maps are [] and
// {}: the generated TypeScript types say "an array", and the UI never meets a null in its place.
var wireOptions = jsonv2.JoinOptions(jsonv1.DefaultOptionsV1(), jsonv2.FormatNilSliceAsNull(false), jsonv2.FormatNilMapAsNull(false))

// Method is one call of the table.
type Method struct {
	// Name is how the UI calls it, e.g. "ListWorkspaces".
	Name string
	// Route is the same call as a REST route, e.g. "PATCH /api/workspaces/{id}" ("" = none).
	// Its path values and, for requests without a body, its query parameters fill the
	// argument fields of the same JSON names.
	Route string
	// Body names the argument that a REST request's whole body fills ("" = the body is the
	// arguments object itself).
	Body string
	// Status is the REST route's status on success: 0 means 200, or 204 for a call without a
	// result.
	Status int
	// Also are more REST routes of the same call (e.g. the create route of a save call), each
	// with its own status.
	Also []REST
	// Args and Result are the Go types of the arguments (a struct) and of the result (nil for
	// a call without one); the TypeScript types are generated from them.
	Args, Result reflect.Type

	call func(ctx context.Context, args json.RawMessage) (any, error)
}

// REST is a REST route of a call and its status on success (0: 200, or 204 without a result).
type REST struct {
	Route  string
	Status int
}

// HasResult says whether the call answers with a value.
func (m *Method) HasResult() bool { return m.Result != nil }

// Table holds the calls, by name.
type Table struct {
	byName map[string]*Method
}

// NewTable returns an empty table.
func NewTable() *Table { return &Table{byName: map[string]*Method{}} }

// None is the arguments of a call that takes none.
type None struct{}

// Add declares a call with a result.
func Add[A, R any](t *Table, m Method, fn func(context.Context, A) (R, error)) {
	m.Args, m.Result = reflect.TypeFor[A](), reflect.TypeFor[R]()
	m.call = func(ctx context.Context, raw json.RawMessage) (any, error) {
		a, err := decodeArgs[A](raw)
		if err != nil {
			return nil, err
		}
		return fn(ctx, a)
	}
	t.add(m)
}

// Do declares a call without a result.
func Do[A any](t *Table, m Method, fn func(context.Context, A) error) {
	m.Args = reflect.TypeFor[A]()
	m.call = func(ctx context.Context, raw json.RawMessage) (any, error) {
		a, err := decodeArgs[A](raw)
		if err != nil {
			return nil, err
		}
		return nil, fn(ctx, a)
	}
	t.add(m)
}

func (t *Table) add(m Method) {
	if m.Args.Kind() != reflect.Struct {
		panic(fmt.Sprintf("rpc: %s's arguments must be a struct, not %s", m.Name, m.Args))
	}
	if _, dup := t.byName[m.Name]; dup {
		panic("rpc: " + m.Name + " is declared twice")
	}
	t.byName[m.Name] = &m
}

// Methods lists the calls by name.
func (t *Table) Methods() []*Method {
	out := make([]*Method, 0, len(t.byName))
	for _, m := range t.byName {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Lookup finds a call by name.
func (t *Table) Lookup(name string) (*Method, bool) {
	m, ok := t.byName[name]
	return m, ok
}

// Call runs a call with its JSON arguments and returns its result as JSON ("null" for a call
// without one). Bad arguments are an *ArgsError naming the field.
func (t *Table) Call(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	m, ok := t.byName[name]
	if !ok {
		return nil, &UnknownError{Name: name}
	}
	v, err := m.call(ctx, args)
	if err != nil {
		return nil, err
	}
	if !m.HasResult() {
		return json.RawMessage("null"), nil
	}
	b, err := jsonv2.Marshal(v, wireOptions)
	if err != nil {
		return nil, fmt.Errorf("%s: its result could not be encoded: %w", name, err)
	}
	return b, nil
}

// UnknownError is a call the table does not hold.
type UnknownError struct{ Name string }

func (e *UnknownError) Error() string {
	return fmt.Sprintf("no call named %q: the UI and the engine are different versions; reload the page or restart the app", e.Name)
}

// ArgsError is arguments that do not fit the call: Field names the argument when one is to
// blame.
type ArgsError struct {
	Field string
	Msg   string
}

func (e *ArgsError) Error() string { return e.Msg }

// decodeArgs reads a call's arguments strictly: unknown fields, a bare null and anything after
// the object are refused with a message that names the problem. Empty arguments are {}.
func decodeArgs[A any](raw json.RawMessage) (A, error) {
	var a A
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		raw = json.RawMessage("{}")
	}
	if string(raw) == "null" {
		return a, &ArgsError{Msg: "request body: null is not a request; send a JSON object"}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	err := dec.Decode(&a)
	if err == nil {
		var extra json.RawMessage
		if more := dec.Decode(&extra); !errors.Is(more, io.EOF) {
			return a, &ArgsError{Msg: "request body: there is more after the JSON value; send exactly one JSON object"}
		}
		return a, nil
	}
	var typ *json.UnmarshalTypeError
	msg := err.Error()
	switch {
	case errors.As(err, &typ):
		return a, &ArgsError{Field: typ.Field, Msg: fmt.Sprintf("%s: should be %s, got %s", typ.Field, typ.Type, typ.Value)}
	case strings.HasPrefix(msg, "json: unknown field "):
		field := strings.Trim(strings.TrimPrefix(msg, "json: unknown field "), `"`)
		return a, &ArgsError{Field: field, Msg: fmt.Sprintf("%s: unknown field; check the spelling", field)}
	}
	return a, &ArgsError{Msg: "request body: " + msg}
}

// jsonFields maps an arguments struct's JSON names to their Go types (embedded structs'
// fields included), for filling them from path values and query parameters.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			for k, v := range jsonFields(f.Type) {
				out[k] = v
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

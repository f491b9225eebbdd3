// Package tools holds the tools the agent can call: a registry, the risk each tool declares
// next to its definition, and typed params from which each tool's JSON schema is derived.
// A tool family (terminal, browser, goal, …) is one file that registers its tools.
package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
)

// Call is one tool call as the model made it.
type Call struct {
	ID   string          `json:"id"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
	// GoalID is set when the call comes from a running goal ("" in chat).
	GoalID string `json:"goalId,omitempty"`
	// PaneID is the caller's own pane (a goal's), WorkspaceID the caller's workspace (a
	// chat's): the workspace tools act on that workspace.
	PaneID      string `json:"paneId,omitempty"`
	WorkspaceID string `json:"workspaceId,omitempty"`
	// Sandbox is the confined caller's sandbox dir ("" for a caller that is not confined):
	// the boundary its calls may not reach out of (see BoundaryUser).
	Sandbox string `json:"sandbox,omitempty"`
	// Nested, set by the agent running the call, runs calls on its behalf (see Nested).
	Nested Nested `json:"-"`
	// Dir is what a relative path in the arguments is relative to: the goal's sandbox (or
	// work dir), the chat's home. The policy judges paths against the same directory, so what
	// it allows is what the tool touches. "" means a relative path is refused.
	Dir string `json:"dir,omitempty"`
}

// Path resolves a path argument of the call against its Dir. A relative path with no Dir is
// an error for the model: the process's own working directory means nothing to it.
func (c Call) Path(p string) (string, error) {
	if p == "" || filepath.IsAbs(p) {
		return p, nil
	}
	if c.Dir == "" {
		return "", fmt.Errorf("%q is a relative path: give the full path", p)
	}
	return filepath.Join(c.Dir, p), nil
}

// Image is a picture a tool hands back to the model (a screenshot).
type Image struct {
	MediaType string `json:"mediaType"` // image/png or image/jpeg
	Data      []byte `json:"data"`
	Path      string `json:"path,omitempty"` // where it was saved, if it was
}

// Result is what the model sees of a call. IsError marks a mistake the model can act on (bad
// arguments, element not found); a failure of the machine itself is a Go error instead.
type Result struct {
	Text    string  `json:"text"`
	IsError bool    `json:"isError,omitempty"`
	Images  []Image `json:"images,omitempty"`
}

// Errorf returns a Result telling the model what went wrong and what to do.
func Errorf(format string, args ...any) Result {
	return Result{Text: fmt.Sprintf(format, args...), IsError: true}
}

// JSONResult is a Result showing v as indented JSON, for tools that answer with data; v that
// does not encode is a failure of the machine, not the model's to fix.
func JSONResult(v any) (Result, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return Result{}, fmt.Errorf("encode the result: %w", err)
	}
	return Result{Text: string(b)}, nil
}

// Tool is one callable tool.
type Tool interface {
	Name() string
	// Description is what the model reads to decide when and how to call the tool.
	Description() string
	// Schema is the JSON Schema of the arguments.
	Schema() json.RawMessage
	// Risk is declared in code next to the tool's definition.
	Risk() Risk
	// Run executes a call whose arguments have not been decoded yet.
	Run(ctx context.Context, call Call) (Result, error)
}

// PathUser is implemented by tools whose calls touch files, so the policy can check every
// path against a goal's sandbox before the call runs.
type PathUser interface {
	Paths(args json.RawMessage) ([]string, error)
}

// CallRisk is implemented by tools whose risk depends on the call: the browser tools raise
// theirs to spends_money on pages that look like checkout, payment, billing or banking.
// RiskFor returns the call's risk and, when it is above the declared one, why.
type CallRisk interface {
	RiskFor(args json.RawMessage) (Risk, string)
}

// Confirmer is implemented by tools some of whose calls the person should see before they run,
// whatever the risk level allows: typing into a password field, uploading files. Confirm says
// why, or "" if the call may run. The chat asks; a goal's ceiling already covers these tools.
type Confirmer interface {
	Confirm(ctx context.Context, args json.RawMessage) string
}

// ParallelSafe is implemented by tools whose calls only read and may run at the same time as
// other such calls of one batch (reading two terminals, waiting on two panes at once).
type ParallelSafe interface {
	ParallelSafe() bool
}

// RiskOf is the risk of one call of t: its CallRisk if it has one, else its declared risk.
func RiskOf(t Tool, args json.RawMessage) (Risk, string) {
	if cr, ok := t.(CallRisk); ok {
		return cr.RiskFor(args)
	}
	return t.Risk(), ""
}

// Func is a tool defined by a typed params struct P and a function over it.
type Func[P any] struct {
	name, desc string
	risk       Risk
	schema     json.RawMessage
	run        func(ctx context.Context, call Call, p P) (Result, error)
	parallel   bool
}

// New defines a tool. P must be a struct; its fields and tags give the schema, and Run
// decodes the model's arguments into it strictly (see Decode) before calling run.
func New[P any](name, desc string, risk Risk, run func(ctx context.Context, call Call, p P) (Result, error)) *Func[P] {
	var zero P
	if reflect.TypeOf(zero).Kind() != reflect.Struct {
		panic("tools.New: params must be a struct, got " + reflect.TypeOf(zero).String())
	}
	return &Func[P]{name: name, desc: desc, risk: risk, schema: Schema(zero), run: run}
}

func (f *Func[P]) Name() string            { return f.name }
func (f *Func[P]) Description() string     { return f.desc }
func (f *Func[P]) Schema() json.RawMessage { return f.schema }
func (f *Func[P]) Risk() Risk              { return f.risk }

// Parallel marks a read-only tool as safe to run alongside other parallel-safe calls of a
// batch (see ParallelSafe). A tool above read_only is never run in parallel.
func (f *Func[P]) Parallel() *Func[P] {
	f.parallel = f.risk == ReadOnly
	return f
}

func (f *Func[P]) ParallelSafe() bool { return f.parallel }

// Run decodes the arguments and runs the tool; arguments that do not fit go back to the model
// as an error result naming the problem, and the tool does not run.
func (f *Func[P]) Run(ctx context.Context, call Call) (Result, error) {
	var p P
	if err := Decode(call.Args, f.schema, &p); err != nil {
		return Errorf("%s: %v. Call it again with arguments that match its schema.", f.name, err), nil
	}
	return f.run(ctx, call, p)
}

// Decode unmarshals args into v strictly: unknown fields, missing required fields and wrong
// types are errors, so a tool never runs with guessed arguments. An empty args means {}.
func Decode(args json.RawMessage, schema json.RawMessage, v any) error {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	var present map[string]json.RawMessage
	if err := json.Unmarshal(args, &present); err != nil {
		return fmt.Errorf("the arguments are not a JSON object (%v)", err)
	}
	var s struct {
		Required []string `json:"required"`
	}
	json.Unmarshal(schema, &s) // Best effort: schemas come from Schema and always parse.
	var missing []string
	for _, r := range s.Required {
		if _, ok := present[r]; !ok {
			missing = append(missing, r)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing required argument(s): %s", strings.Join(missing, ", "))
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var typ *json.UnmarshalTypeError
		if errors.As(err, &typ) {
			return fmt.Errorf("argument %q should be %s, got %s", typ.Field, typ.Type, typ.Value)
		}
		if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			return fmt.Errorf("unknown argument %s", name)
		}
		return err
	}
	return nil
}

// Definition is what a model is told about a tool.
type Definition struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema"`
	Risk        Risk            `json:"risk"`
	// Source is where a tool that is not built in comes from ("plugin", "mcp"); "" for a
	// tool registered in code.
	Source string `json:"source,omitempty"`
	// upfront: a source's tool that asks to be offered always (Upfront, see GroupOf).
	upfront bool
}

// Registry holds the tools by name: the ones registered in code, and those its sources
// (plugins, MCP servers) offer at the time they are asked.
type Registry struct {
	mu      sync.RWMutex
	tools   map[string]Tool
	sources []Source
	// panes shows a caller's workspace to Situation (offer.go); nil: nothing is seen.
	panes PaneLister
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{tools: map[string]Tool{}} }

// Register adds tools; a duplicate name is a programming error and panics.
func (r *Registry) Register(ts ...Tool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, t := range ts {
		if _, dup := r.tools[t.Name()]; dup {
			panic("tools: " + t.Name() + " registered twice")
		}
		r.tools[t.Name()] = t
	}
}

// Get returns the tool with that name, built in or from a source, or one a source withholds
// now (see Withholder).
func (r *Registry) Get(name string) (Tool, bool) {
	r.mu.RLock()
	t, ok := r.tools[name]
	r.mu.RUnlock()
	if ok {
		return t, true
	}
	for _, st := range r.sourceTools() {
		if st.tool.Name() == name {
			return st.tool, true
		}
	}
	return r.withheld(name)
}

// Names lists the tool names, built in and from sources, sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	names := make([]string, 0, len(r.tools))
	for n := range r.tools {
		names = append(names, n)
	}
	r.mu.RUnlock()
	for _, st := range r.sourceTools() {
		names = append(names, st.tool.Name())
	}
	slices.Sort(names)
	return names
}

// Definitions describes the named tools (all when names is empty), sorted by name.
func (r *Registry) Definitions(names ...string) []Definition {
	r.mu.RLock()
	// Sized up front: a request lists them all each turn.
	all := make(map[string]Definition, len(r.tools))
	for _, t := range r.tools {
		all[t.Name()] = Definition{Name: t.Name(), Description: t.Description(), Schema: t.Schema(), Risk: t.Risk()}
	}
	r.mu.RUnlock()
	for _, st := range r.sourceTools() {
		t := st.tool
		u, ok := t.(Upfront)
		all[t.Name()] = Definition{Name: t.Name(), Description: t.Description(), Schema: t.Schema(), Risk: t.Risk(), Source: st.kind,
			upfront: ok && u.Upfront()}
	}
	if len(names) == 0 {
		names = slices.Sorted(maps.Keys(all))
	}
	var defs []Definition
	for _, n := range names {
		if d, ok := all[n]; ok {
			defs = append(defs, d)
		}
	}
	return defs
}

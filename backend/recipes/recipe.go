// Package recipes keeps browser recipes: named sequences of browser tool calls with
// {{param}} placeholders, saved by the agent (browser_save_recipe) or over the API, and run
// by the agent (browser_run_recipe: each step through the policy as its own call) or by the
// person from a browser pane's menu.
package recipes

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/clusterspace/clusterspace/backend/tools"
)

// Limits of a recipe, so a saved one stays something a person can read and a run stays short.
const (
	// MaxSteps bounds a recipe's length; flows longer than this are better split.
	MaxSteps = 50
	// maxNameLen bounds a name: it is shown in a menu.
	maxNameLen = 80
	// maxDescriptionLen bounds a description.
	maxDescriptionLen = 1000
)

// Step is one browser tool call of a recipe. Its arguments may hold {{param}} placeholders
// inside strings; pane_id is left out (the run says which pane).
type Step struct {
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args"`
}

// Recipe is a saved recipe as the UI and the model see it.
type Recipe struct {
	Name        string    `json:"name"`
	Description string    `json:"description"`
	Steps       []Step    `json:"steps"`
	Params      []string  `json:"params"` // the placeholders its steps use, in order of first use
	CreatedAt   time.Time `json:"createdAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
}

// FieldError names the field of a recipe (or of a run) that is wrong and what to do.
type FieldError struct{ Field, Msg string }

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// placeholder is {{name}}: a letter or underscore, then letters, digits, underscores or dashes.
var placeholder = regexp.MustCompile(`\{\{\s*([A-Za-z_][A-Za-z0-9_-]*)\s*\}\}`)

// validName is what a recipe may be called: it names it in menus and in the model's calls.
var validName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9 _.-]*$`)

// Registry says what a step may call; the tools registry answers. A recipe step may be any
// browser tool except the recipe tools themselves (a recipe does not run recipes).
type Registry interface {
	Get(name string) (tools.Tool, bool)
}

// The recipe tools, which no recipe step may call.
const (
	ToolSave = "browser_save_recipe"
	ToolList = "browser_list_recipes"
	ToolRun  = "browser_run_recipe"
)

// stepTool says whether a step may call name.
func stepTool(reg Registry, name string) error {
	if !strings.HasPrefix(name, "browser_") {
		return fmt.Errorf("%q is not a browser tool: a recipe step calls a browser_… tool", name)
	}
	if name == ToolSave || name == ToolList || name == ToolRun {
		return fmt.Errorf("%q cannot be a step: a recipe does not save, list or run recipes", name)
	}
	if _, ok := reg.Get(name); !ok {
		return fmt.Errorf("there is no browser tool %q", name)
	}
	return nil
}

// Normalize checks a recipe before it is saved and returns it as it will be stored: each
// step's tool is a browser tool, its arguments fit that tool's schema (placeholders stand in
// for string values; pane_id is dropped, the run supplies it), and its params are listed.
// Errors name the step and the field: "steps[2].args: unknown argument "selecter"".
func Normalize(reg Registry, r Recipe) (Recipe, error) {
	r.Name, r.Description = strings.TrimSpace(r.Name), strings.TrimSpace(r.Description)
	switch {
	case r.Name == "":
		return r, &FieldError{"name", "must not be empty: name the recipe (it is shown in the browser pane's menu)"}
	case len(r.Name) > maxNameLen:
		return r, &FieldError{"name", fmt.Sprintf("is %d characters long; use at most %d", len(r.Name), maxNameLen)}
	case !validName.MatchString(r.Name):
		return r, &FieldError{"name", fmt.Sprintf("%q has characters a recipe name cannot have: use letters, digits, spaces, _ . and -", r.Name)}
	case len(r.Description) > maxDescriptionLen:
		return r, &FieldError{"description", fmt.Sprintf("is %d characters long; use at most %d", len(r.Description), maxDescriptionLen)}
	case len(r.Steps) == 0:
		return r, &FieldError{"steps", "is empty: give at least one browser tool call {tool, args}"}
	case len(r.Steps) > MaxSteps:
		return r, &FieldError{"steps", fmt.Sprintf("has %d steps; a recipe has at most %d (split it in two)", len(r.Steps), MaxSteps)}
	}
	r.Params = nil
	steps := make([]Step, len(r.Steps))
	for i, st := range r.Steps {
		field := fmt.Sprintf("steps[%d]", i)
		st.Tool = strings.TrimSpace(st.Tool)
		if st.Tool == "" {
			return r, &FieldError{field + ".tool", "is empty: name the browser tool this step calls"}
		}
		if err := stepTool(reg, st.Tool); err != nil {
			return r, &FieldError{field + ".tool", err.Error()}
		}
		args, err := objectArgs(st.Args)
		if err != nil {
			return r, &FieldError{field + ".args", err.Error()}
		}
		delete(args, "pane_id")
		clean, _ := json.Marshal(args) // Best effort: it was decoded from JSON just above.
		tool, _ := reg.Get(st.Tool)
		// The step as it will run, with a pane and every placeholder standing in as text: its
		// tool's strict decoding finds unknown, missing and mistyped arguments now, not mid-run.
		probe := map[string]any{}
		for k, v := range args {
			probe[k] = v
		}
		probe["pane_id"] = "pane"
		raw, _ := json.Marshal(probe)
		var sink map[string]any
		if err := tools.Decode(raw, tool.Schema(), &sink); err != nil {
			return r, &FieldError{field + ".args", err.Error()}
		}
		if err := checkSchema(raw, tool.Schema()); err != nil {
			return r, &FieldError{field + ".args", err.Error()}
		}
		for _, m := range placeholder.FindAllSubmatch(clean, -1) {
			if p := string(m[1]); !slices.Contains(r.Params, p) {
				r.Params = append(r.Params, p)
			}
		}
		steps[i] = Step{Tool: st.Tool, Args: clean}
	}
	r.Steps = steps
	if r.Params == nil {
		r.Params = []string{}
	}
	return r, nil
}

// objectArgs reads a step's arguments: a JSON object (absent means {}).
func objectArgs(raw json.RawMessage) (map[string]any, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return map[string]any{}, nil
	}
	var args map[string]any
	if err := json.Unmarshal(raw, &args); err != nil {
		return nil, fmt.Errorf("is not a JSON object of the tool's arguments (%v)", err)
	}
	if args == nil {
		args = map[string]any{}
	}
	return args, nil
}

// checkSchema finds what decoding into a map cannot: an argument the tool does not take, a
// required one missing, a value of the wrong JSON type.
func checkSchema(args, schema json.RawMessage) error {
	var s struct {
		Properties map[string]struct {
			Type string `json:"type"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		return nil // Best effort: the registry's schemas come from tools.Schema.
	}
	var got map[string]any
	json.Unmarshal(args, &got) // Best effort: args was marshalled by the caller.
	var known []string
	for k := range s.Properties {
		known = append(known, k)
	}
	slices.Sort(known)
	for k, v := range got {
		p, ok := s.Properties[k]
		if !ok {
			return fmt.Errorf("unknown argument %q: the tool takes %s", k, strings.Join(known, ", "))
		}
		if !jsonTypeIs(v, p.Type) {
			return fmt.Errorf("argument %q should be %s", k, p.Type)
		}
	}
	for _, k := range s.Required {
		if _, ok := got[k]; !ok {
			return fmt.Errorf("missing required argument %q", k)
		}
	}
	return nil
}

func jsonTypeIs(v any, typ string) bool {
	switch typ {
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "integer":
		f, ok := v.(float64)
		return ok && f == float64(int64(f))
	case "number":
		_, ok := v.(float64)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "object":
		_, ok := v.(map[string]any)
		return ok
	}
	return true
}

// Fill is the step's arguments for one run: every placeholder replaced by its param's value
// and pane_id set to the pane. A placeholder that fills a whole string takes the value as
// it is; one inside a longer string is replaced as text.
func Fill(step Step, paneID string, params map[string]string) (json.RawMessage, error) {
	args, err := objectArgs(step.Args)
	if err != nil {
		return nil, err
	}
	filled := fillValue(args, params).(map[string]any)
	filled["pane_id"] = paneID
	return json.Marshal(filled)
}

func fillValue(v any, params map[string]string) any {
	switch x := v.(type) {
	case string:
		return placeholder.ReplaceAllStringFunc(x, func(m string) string {
			name := placeholder.FindStringSubmatch(m)[1]
			if val, ok := params[name]; ok {
				return val
			}
			return m
		})
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = fillValue(e, params)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = fillValue(e, params)
		}
		return out
	}
	return v
}

// CheckParams refuses a run whose params leave a placeholder empty or name one the recipe
// does not use, before any step runs.
func CheckParams(r Recipe, params map[string]string) error {
	var missing []string
	for _, p := range r.Params {
		if v, ok := params[p]; !ok || strings.TrimSpace(v) == "" {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		return &FieldError{"params", fmt.Sprintf("recipe %q needs a value for %s; nothing was run: call it again with params {%s}",
			r.Name, strings.Join(missing, ", "), strings.Join(quoted(missing), ": \"…\", ")+": \"…\"")}
	}
	for k := range params {
		if !slices.Contains(r.Params, k) {
			uses := "no params"
			if len(r.Params) > 0 {
				uses = "the params " + strings.Join(r.Params, ", ")
			}
			return &FieldError{"params", fmt.Sprintf("recipe %q has no placeholder {{%s}} (it uses %s); nothing was run", r.Name, k, uses)}
		}
	}
	return nil
}

func quoted(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

package recipes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/clusterspace/clusterspace/backend/tools"
)

// saveArgs are browser_save_recipe's arguments, decoded strictly against saveSchema.
type saveArgs struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Steps       []Step `json:"steps"`
}

type listParams struct{}

type runParams struct {
	Name   string            `json:"name" desc:"Name of the recipe, as browser_list_recipes shows it."`
	PaneID string            `json:"pane_id,omitempty" desc:"Browser pane to run it in; default the only browser pane."`
	Params map[string]string `json:"params,omitempty" desc:"A value for each of the recipe's {{params}}."`
}

// saveSchema is browser_save_recipe's schema written out: a step's args are any object,
// which the schema derived from the params struct cannot say.
const saveSchema = `{"type":"object","additionalProperties":false,"required":["name","steps"],"properties":{` +
	`"name":{"type":"string","description":"Name of the recipe (letters, digits, spaces, _ . -); saving under an existing name replaces it."},` +
	`"description":{"type":"string","description":"What the recipe does and when to use it, in a sentence."},` +
	`"steps":{"type":"array","description":"The browser tool calls in order, each with the tool's arguments except pane_id. Put {{param}} in string values for what changes between runs.",` +
	`"items":{"type":"object","additionalProperties":false,"required":["tool","args"],"properties":{` +
	`"tool":{"type":"string","description":"A browser tool, such as browser_navigate or browser_type."},` +
	`"args":{"type":"object","description":"Its arguments, e.g. {\"selector\": \"#q\", \"text\": \"{{query}}\"}."}}}}}}`

// saveTool is browser_save_recipe, written out rather than made with tools.New: a step's
// args are any object, which a schema derived from a params struct cannot say.
type saveTool struct{ s *Service }

func (saveTool) Name() string            { return ToolSave }
func (saveTool) Risk() tools.Risk        { return tools.WriteLocal }
func (saveTool) Schema() json.RawMessage { return json.RawMessage(saveSchema) }
func (saveTool) Description() string {
	return "Save a browser recipe: a named sequence of browser tool calls, with {{param}} placeholders in string arguments, " +
		"that you or the user can run again later (browser_run_recipe, or the browser pane's menu). Steps are checked now: each must be a browser tool " +
		"with arguments that fit it. Leave pane_id out; the run supplies it."
}

func (t saveTool) Run(ctx context.Context, call tools.Call) (tools.Result, error) {
	var p saveArgs
	if err := tools.Decode(call.Args, t.Schema(), &p); err != nil {
		return tools.Errorf("%s: %v. Call it again with arguments that match its schema.", ToolSave, err), nil
	}
	r, err := t.s.Save(ctx, Recipe{Name: p.Name, Description: p.Description, Steps: p.Steps})
	if fe := (*FieldError)(nil); errors.As(err, &fe) {
		return tools.Errorf("The recipe was not saved: %v. Fix it and call %s again.", err, ToolSave), nil
	}
	if err != nil {
		return tools.Result{}, err
	}
	params := "no params"
	if len(r.Params) > 0 {
		params = "params " + strings.Join(r.Params, ", ")
	}
	return tools.Result{Text: fmt.Sprintf("Saved recipe %q: %d steps, %s.", r.Name, len(r.Steps), params)}, nil
}

// Tools are the recipe tools, to register with the rest.
func Tools(s *Service) []tools.Tool {
	return []tools.Tool{
		saveTool{s},
		tools.New(ToolList, "List the saved browser recipes: name, description, params and steps.", tools.ReadOnly,
			func(ctx context.Context, _ tools.Call, _ listParams) (tools.Result, error) {
				list, err := s.List(ctx)
				if err != nil {
					return tools.Result{}, err
				}
				if len(list) == 0 {
					return tools.Result{Text: "No recipes are saved yet. Save one with " + ToolSave + "."}, nil
				}
				type item struct {
					Name        string   `json:"name"`
					Description string   `json:"description"`
					Params      []string `json:"params"`
					Steps       []Step   `json:"steps"`
				}
				items := make([]item, len(list))
				for i, r := range list {
					items[i] = item{r.Name, r.Description, r.Params, r.Steps}
				}
				b, _ := json.MarshalIndent(items, "", "  ") // Best effort: plain data always marshals.
				return tools.Result{Text: string(b)}, nil
			}).Parallel(),
		tools.New(ToolRun, "Run a saved browser recipe in a browser pane, step by step. Each step is its own tool call, decided by the same "+
			"policy as your own calls (a step above your risk ceiling asks the user). A missing param is refused before any step runs; the run stops "+
			"at the first step that fails and says which.", tools.ReadOnly,
			func(ctx context.Context, call tools.Call, p runParams) (tools.Result, error) {
				if call.Nested == nil {
					// Outside an agent nothing would decide the steps: never run them unchecked.
					return tools.Errorf("%s runs only inside a goal or a chat, where each step is checked; the user can run a recipe from the browser pane's menu.", ToolRun), nil
				}
				r, pane, filled, err := s.prepare(ctx, p.Name, p.PaneID, p.Params)
				if fe := (*FieldError)(nil); errors.As(err, &fe) {
					return tools.Errorf("Nothing was run: %v.", err), nil
				}
				if errors.Is(err, ErrNotFound) {
					return tools.Errorf("There is no recipe %q: call %s for the saved ones.", p.Name, ToolList), nil
				}
				if err != nil {
					return tools.Result{}, err
				}
				// Each step is a nested call of the agent's: decided, asked and logged as its own.
				step := func(ctx context.Context, name string, args json.RawMessage) (tools.Result, error) {
					tool, ok := s.reg.Get(name)
					if !ok {
						return tools.Errorf("there is no tool named %q", name), nil
					}
					return call.Nested(ctx, tool, args)
				}
				res, err := run(ctx, r, pane, filled, step)
				if err != nil {
					if ctx.Err() != nil {
						return tools.Result{}, err
					}
					return tools.Errorf("%s\nThe run stopped: %v.", res.Report(len(r.Steps)), err), nil
				}
				return tools.Result{Text: res.Report(len(r.Steps)), IsError: !res.Completed}, nil
			}),
	}
}

package recipes

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/browser"
	"github.com/clusterspace/clusterspace/backend/tools"
)

func registry(t *testing.T) *tools.Registry {
	m := browser.NewManager(browser.Options{DataDir: t.TempDir()}) // never launched: only the schemas are read
	t.Cleanup(m.Shutdown)
	reg := tools.NewRegistry()
	tools.RegisterBrowser(reg, m, nil)
	reg.Register(tools.GoalTools()...)
	return reg
}

func step(tool, args string) Step { return Step{Tool: tool, Args: json.RawMessage(args)} }

// Every mistake in a recipe is refused at save, naming the step and field.
func TestNormalizeNamesTheStepAndField(t *testing.T) {
	reg := registry(t)
	ok := step("browser_navigate", `{"url":"https://a.example"}`)
	for _, c := range []struct {
		name  string
		r     Recipe
		field string
		msg   string
	}{
		{"no name", Recipe{Steps: []Step{ok}}, "name", "must not be empty"},
		{"bad name", Recipe{Name: "a/b", Steps: []Step{ok}}, "name", "characters a recipe name cannot have"},
		{"no steps", Recipe{Name: "r"}, "steps", "is empty"},
		{"not a browser tool", Recipe{Name: "r", Steps: []Step{ok, step("write_to_terminal", `{}`)}}, "steps[1].tool", "not a browser tool"},
		{"a recipe tool", Recipe{Name: "r", Steps: []Step{step(ToolRun, `{}`)}}, "steps[0].tool", "does not save, list or run recipes"},
		{"unknown tool", Recipe{Name: "r", Steps: []Step{step("browser_fly", `{}`)}}, "steps[0].tool", `no browser tool "browser_fly"`},
		{"unknown arg", Recipe{Name: "r", Steps: []Step{ok, ok, step("browser_type", `{"selecter":"#q","text":"x"}`)}}, "steps[2].args", `unknown argument "selecter"`},
		{"missing arg", Recipe{Name: "r", Steps: []Step{step("browser_type", `{"selector":"#q"}`)}}, "steps[0].args", "text"},
		{"wrong type", Recipe{Name: "r", Steps: []Step{step("browser_scroll", `{"pixels":"{{n}}"}`)}}, "steps[0].args", `"pixels" should be integer`},
		{"not an object", Recipe{Name: "r", Steps: []Step{step("browser_navigate", `["x"]`)}}, "steps[0].args", "not a JSON object"},
	} {
		_, err := Normalize(reg, c.r)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != c.field || !strings.Contains(fe.Msg, c.msg) {
			t.Errorf("%s: got %v, want %s: …%s…", c.name, err, c.field, c.msg)
		}
	}
}

func TestNormalizeListsParamsAndDropsThePane(t *testing.T) {
	r, err := Normalize(registry(t), Recipe{Name: " search ", Steps: []Step{
		step("browser_navigate", `{"url":"https://{{host}}/s","pane_id":"web-9"}`),
		step("browser_type", `{"selector":"#q","text":"{{ query }} in {{host}}","submit":true}`),
	}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Name != "search" || strings.Join(r.Params, ",") != "host,query" || strings.Contains(string(r.Steps[0].Args), "pane_id") {
		t.Fatalf("%+v", r)
	}
	if err := CheckParams(r, map[string]string{"host": "a.example"}); err == nil || !strings.Contains(err.Error(), "needs a value for query; nothing was run") {
		t.Errorf("missing param: %v", err)
	}
	if err := CheckParams(r, map[string]string{"host": "a", "query": "q", "extra": "x"}); err == nil || !strings.Contains(err.Error(), "no placeholder {{extra}}") {
		t.Errorf("unknown param: %v", err)
	}
	params := map[string]string{"host": "a.example", "query": `say "hi"`}
	if err := CheckParams(r, params); err != nil {
		t.Fatal(err)
	}
	args, err := Fill(r.Steps[1], "web-1", params)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	json.Unmarshal(args, &got)
	if got["text"] != `say "hi" in a.example` || got["pane_id"] != "web-1" || got["submit"] != true {
		t.Errorf("filled: %s", args)
	}
}

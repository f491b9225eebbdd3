package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/goal/criterion"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
	"github.com/clusterspace/clusterspace/backend/tools"
)

// insideOnly are the tools that declare no pane, path, address or outside process the
// policy could judge, each with why it cannot leave a confined goal's boundary. A new tool
// must be judged here (or declare what it reaches) before this walk passes.
var insideOnly = map[string]string{
	// The goal's own state and story.
	tools.ToolClaimComplete: "the goal's own", tools.ToolAbortWithReport: "the goal's own", "write_todos": "the goal's own",
	"complete_todo": "the goal's own", "declare_step": "the goal's own", "verify_step": "the goal's own",
	"read_step_output": "the goal's own steps", "use_skill": "text from the config the app loaded",
	// The window's layout and what it lists: nothing runs, nothing is read but metadata.
	"list_panes": "metadata", "find_tools": "the registry's own names and descriptions", "focus_pane": "the window's focus", "maximize_pane": "the window's layout",
	"create_workspace": "its panes are inside the boundary (TestConfinedGoalBoundaryCoversThePanesItMakes)",
	// Browser pages: the browser runs outside the goal's namespaces, and what it opens is
	// judged by URL (browser_navigate, open_browser_tab); these act on the page already open.
	"switch_browser_tab": "a page", "close_browser_tab": "a page",
	// Fleet work: tasks and goals it assigns run under its policy, sandbox included.
	"assign_task": "inherits the goal's policy", "create_goal": "inherits the goal's policy",
	"wait_for_agent": "reads a goal's status", "share_context": "a message to another agent's inbox",
	"list_agents": "metadata", "report_progress": "the task's own", "complete_task": "the task's own",
	"fail_task": "the task's own", "list_tasks": "metadata", "get_task": "metadata",
	// Recipes run their steps as calls of their own, each through this same policy.
	"run_recipe": "its steps are ordinary calls", "list_recipes": "metadata", "save_recipe": "the app's recipe store",
	// The config dir's plugins run in the app, with no file or network reach but ctx.readFile
	// (beneath the goal's dir) and ctx.fetch (a call of its own through this policy).
	"word_count": "pure computation", "post_note": "pure computation", "spin": "pure computation",
	"weather":          "its ctx.fetch is judged as a call of its own",
	"get_fleet_status": "metadata", "set_agent_role": "metadata", "wait": "a timer",
	"list_skills": "text from the config the app loaded", "load_skill": "text from the config the app loaded",
}

// browserPage is why the browser tools without a URL or path of their own stay inside: they
// act on the page already open in a pane, whose address was judged when it was opened. (A
// page's own scripts run in the browser, outside the goal's network namespace: see the
// README's security section.)
const browserPage = "acts on the open page"

func judgedInside(name string) string {
	if why := insideOnly[name]; why != "" {
		return why
	}
	if strings.HasPrefix(name, "browser_") {
		return browserPage
	}
	return ""
}

// The walk: a confined goal calls every registered tool — built-in, plugin and MCP — with
// arguments that try to leave its boundary (a person's pane, files outside, the app's data,
// a local service). Each call must be refused or asked (and here denied), unless the tool is
// one of insideOnly; afterwards nothing outside has changed.
func TestEveryToolOfAConfinedGoalStaysInsideOrAsks(t *testing.T) {
	var localHits atomic.Int32
	local := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { localHits.Add(1) }))
	defer local.Close()
	r := newBoundaryRig(t, WithConfigDir(extensionConfig(t, fmt.Sprintf("walk-%d", time.Now().UnixNano()), local.URL)))
	ctx := context.Background()
	person, own := r.ws.Panes[0], r.ws.Panes[1].ID
	personTab, err := r.eng.Panes.StartTerminal(ctx, r.ws, person, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	escape := map[string]any{
		"pane_id": person.ID, "tab_id": personTab.TabID, "text": "touch " + filepath.Join(outside, "typed"),
		"path": filepath.Join(outside, "saved"), "paths": []string{filepath.Join(r.eng.DataDir, "jwt.key")},
		"url": local.URL + "/", "name": "walk", "rows": 1, "cols": 1, "description": "walk task",
	}
	var calls []llmtest.ToolCall
	names := r.eng.Registry.Names()
	sort.Strings(names)
	for _, name := range names {
		if name == tools.ToolClaimComplete || name == tools.ToolAbortWithReport {
			continue // they end the goal; the goal's own
		}
		tool, _ := r.eng.Registry.Get(name)
		args := argsFor(t, tool, escape)
		if _, ok := args["pane_id"]; ok && (name == "assign_task" || name == "create_goal") {
			// A task it assigns runs confined in the pane it names, which would put a confined
			// tab in front of the person's: aim those at a pane of their own.
			args["pane_id"] = r.ws.Panes[2].ID
		}
		calls = append(calls, llmtest.Call(name, args))
	}
	if len(calls) < 40 {
		t.Fatalf("only %d tools to walk: %v", len(calls), names)
	}
	g := r.run(own, t.TempDir(), tools.SpendsMoney, criterion.Spec{Kind: "manual"}, llmtest.Calls(calls...), abort())
	judged := map[string]string{}
	for _, s := range goalSteps(t, r.eng, g.ID, len(calls)+5) {
		judged[s.Tool] = s.Result
	}
	var unjudged []string
	for _, name := range names {
		tool, _ := r.eng.Registry.Get(name)
		reaches := declaresReach(tool)
		res, ran := judged[name]
		switch {
		case name == tools.ToolClaimComplete || name == tools.ToolAbortWithReport:
		case !ran:
			t.Errorf("%s was never called", name)
		case reaches && !strings.Contains(res, "denied in this test") && !strings.Contains(res, "Refused by the goal's policy"):
			t.Errorf("%s reached out of the boundary without being refused or asked:\n%s", name, res)
		case !reaches && judgedInside(name) == "":
			unjudged = append(unjudged, name)
		}
	}
	if len(unjudged) > 0 {
		t.Errorf("tools neither declare what they reach nor are judged in insideOnly: %v", unjudged)
	}
	if entries, _ := os.ReadDir(outside); len(entries) > 0 {
		t.Errorf("the walk changed files outside the sandbox: %v", entries)
	}
	if n := localHits.Load(); n != 0 {
		t.Errorf("the walk reached a local service %d times", n)
	}
	if text, _ := r.eng.Terminals.Tail(person.ID, "", 20); strings.Contains(text, "touch") {
		t.Errorf("the walk typed into the person's terminal:\n%s", text)
	}
}

// argsFor fills the tool's schema from escape: each property it declares gets the escaping
// value of that name, or a plain one of its type when it is required, so the call reaches
// the policy instead of failing on its arguments.
func argsFor(t *testing.T, tool tools.Tool, escape map[string]any) map[string]any {
	var schema struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(tool.Schema(), &schema); err != nil {
		t.Fatalf("%s: schema: %v", tool.Name(), err)
	}
	args := map[string]any{}
	for name, prop := range schema.Properties {
		if v, ok := escape[name]; ok {
			args[name] = v
			continue
		}
		if !slices.Contains(schema.Required, name) {
			continue
		}
		switch fmt.Sprint(prop.Type) {
		case "integer", "number":
			args[name] = 1
		case "boolean":
			args[name] = false
		case "array":
			args[name] = []any{}
		case "object":
			args[name] = map[string]any{}
		default:
			args[name] = "x"
		}
	}
	return args
}

// declaresReach reports whether a tool tells the policy what it reaches.
func declaresReach(t tools.Tool) bool {
	switch t.(type) {
	case tools.BoundaryUser, tools.PathUser, tools.URLUser, tools.OutsideRunner:
		return true
	}
	return false
}

// TestEveryRegisteredToolGoesThroughThePolicy walks the engine's real tool registry. For
// each tool, a goal whose deny list holds just that tool has the model call it: the call must
// be refused by the policy (so it never ran), whatever the tool is.
func TestEveryRegisteredToolGoesThroughThePolicy(t *testing.T) {
	srv := llmtest.New(t, llmtest.Script{})
	cfg := srv.Config()
	eng := openEngine(t, t.TempDir(),
		WithPaneExists(func(string) bool { return true }),
		WithModel(cfg))
	defer eng.Close()
	names := eng.Registry.Names()
	if len(names) < 10 {
		t.Fatalf("only %d tools registered: %v", len(names), names)
	}
	for _, name := range names {
		end := llmtest.Calls(llmtest.Call(tools.ToolAbortWithReport, map[string]string{"reason": "done testing", "what_was_learned": "the policy refused it"}))
		if name == tools.ToolAbortWithReport {
			end = llmtest.Calls(llmtest.Call(tools.ToolClaimComplete, map[string]string{"rationale": "done testing"}))
		}
		srv.Push(llmtest.Calls(llmtest.Call(name, map[string]any{})), end)
		spec := testSpec("term-1", "call "+name, t.TempDir())
		spec.Policy.Ceiling = tools.SpendsMoney // the deny list alone must stop it
		spec.Policy.Denied = []string{name}
		g, err := runGoal(eng, spec, 20*time.Second)
		if err != nil || !g.Status.Finished() {
			t.Fatalf("%s: goal did not end: %v %s", name, err, g.Status)
		}
		steps := goalSteps(t, eng, g.ID, 5)
		if len(steps) == 0 || steps[0].Tool != name || !strings.Contains(steps[0].Result, "Refused by the goal's policy: "+name+" is on this goal's deny list") {
			t.Errorf("%s was not refused by the policy: %+v", name, steps)
		}
	}
	t.Logf("walked %d tools: %s", len(names), strings.Join(names, ", "))
}

package goal_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/clusterspace/clusterspace/backend/engine"
	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/goal/criterion"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
	"github.com/clusterspace/clusterspace/backend/panes"
	"github.com/clusterspace/clusterspace/backend/tools"
)

// Tools offered by need (agent/offer.go) against the app's own registry: every built-in
// tool as the engine registers it.

// The targets for a goal that needs only a shell: its first request carries at most 20 tools
// and 16 KB of tool definitions (all 73, 42.6 KB, before).
const (
	maxShellTools     = 20
	maxShellToolBytes = 16 * 1024
)

// engineTools is the app's registry, with a config dir of its own (no plugins, no MCP
// servers), and what it sees of the goal's workspace: a terminal pane and whatever the test
// adds.
func engineTools(t testing.TB) (*tools.Registry, *workspaceKinds) {
	t.Helper()
	eng, err := engine.Open(context.Background(), t.TempDir(), engine.WithLogger(slog.New(slog.DiscardHandler)), engine.WithConfigDir(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	ws := &workspaceKinds{kinds: []string{"terminal"}}
	eng.Registry.SetPanes(ws)
	return eng.Registry, ws
}

// workspaceKinds lists panes of the kinds it holds.
type workspaceKinds struct {
	mu    sync.Mutex
	kinds []string
}

func (w *workspaceKinds) add(kind string) {
	w.mu.Lock()
	w.kinds = append(w.kinds, kind)
	w.mu.Unlock()
}

func (w *workspaceKinds) List(ctx context.Context, c panes.Caller, cursor string, limit int) (panes.Page, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	page := panes.Page{Workspace: "w"}
	for i, k := range w.kinds {
		page.Items = append(page.Items, panes.Item{PaneID: k + "-" + string(rune('1'+i)), Kind: k, Yours: i == 0})
	}
	return page, nil
}

// shellSpec is a goal that needs a shell only.
func (r *rig) shellSpec(edit ...func(*goal.Spec)) goal.Spec {
	return r.spec(append([]func(*goal.Spec){func(s *goal.Spec) { s.Criterion = criterion.Spec{Kind: "shell", Command: "true"} }}, edit...)...)
}

// toolsSent are the names and the bytes of the tool definitions of a request, as sent.
func toolsSent(t testing.TB, q llmtest.Request) ([]string, int) {
	t.Helper()
	var body struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(q.Body, &body); err != nil {
		t.Fatal(err)
	}
	var names []string
	size := 2 + max(len(body.Tools)-1, 0) // the brackets and commas
	for _, raw := range body.Tools {
		var def struct {
			Function struct{ Name string } `json:"function"`
		}
		json.Unmarshal(raw, &def)
		names = append(names, def.Function.Name)
		size += len(raw)
	}
	return names, size
}

// goalRequests are the goal's own requests (not a critic's or a judge's).
func goalRequests(srv *llmtest.Server) []llmtest.Request {
	var out []llmtest.Request
	for _, q := range srv.ChatRequests() {
		if strings.Contains(q.System, "ClusterSpace's agent") {
			out = append(out, q)
		}
	}
	return out
}

// A goal that needs a shell is offered the terminal, its goal tools, the panes and
// find_tools: at most 20 tools and 16 KB, where it was sent all 73 (42.6 KB) before.
func TestAShellGoalIsOfferedItsCoreTools(t *testing.T) {
	t.Parallel()
	reg, _ := engineTools(t)
	r := newRigWith(t, llmtest.Script{Replies: []llmtest.Reply{claim("nothing to do")}}, reg)
	if g, _ := r.run(r.shellSpec()); g.Status != goal.StatusCompleted {
		t.Fatalf("%s: %s", g.Status, g.Report)
	}
	names, size := toolsSent(t, goalRequests(r.srv)[0])
	t.Logf("first request: %d tools, %d bytes of definitions (the registry holds %d): %v", len(names), size, len(reg.Names()), names)
	if len(names) > maxShellTools || size > maxShellToolBytes {
		t.Errorf("%d tools, %d bytes: want at most %d and %d", len(names), size, maxShellTools, maxShellToolBytes)
	}
	for _, want := range []string{"write_to_terminal", "read_terminal_output", "wait_for_output", tools.ToolClaimComplete, tools.ToolAbortWithReport,
		tools.ToolWriteTodos, tools.ToolReadStepOutput, "list_panes", tools.ToolFindTools} {
		if !slices.Contains(names, want) {
			t.Errorf("%s is not offered", want)
		}
	}
	for _, n := range names {
		if strings.HasPrefix(n, "browser_") || n == "assign_task" || n == "get_fleet_status" {
			t.Errorf("%s is offered to a goal without a browser pane or a fleet", n)
		}
	}
}

// A goal whose workspace holds a browser pane, or whose criterion looks at a page, is
// offered the browser tools from its first request.
func TestAGoalWithABrowserPaneIsOfferedTheBrowserTools(t *testing.T) {
	t.Parallel()
	reg, ws := engineTools(t)
	ws.add("browser")
	r := newRigWith(t, llmtest.Script{Replies: []llmtest.Reply{claim("nothing to do")}}, reg)
	r.run(r.shellSpec())
	names, size := toolsSent(t, goalRequests(r.srv)[0])
	t.Logf("with a browser pane: %d tools, %d bytes", len(names), size)
	for _, want := range []string{"browser_navigate", "browser_click", "browser_get_content", "browser_screenshot", "open_browser_tab", "write_to_terminal"} {
		if !slices.Contains(names, want) {
			t.Errorf("%s is not offered", want)
		}
	}
	if slices.Contains(names, "browser_save_pdf") || slices.Contains(names, "assign_task") {
		t.Errorf("rare or fleet tools offered: %v", names)
	}

	visualReg, _ := engineTools(t)
	visual := newRigWith(t, llmtest.Script{Replies: []llmtest.Reply{claim("shown")}}, visualReg, func(o *goal.Options) {
		o.Visual = func(context.Context, string, string) (criterion.Verdict, error) {
			return criterion.Verdict{Passed: true}, nil
		}
	})
	visual.run(visual.spec(func(s *goal.Spec) {
		s.Criterion = criterion.Spec{Kind: criterion.KindVisual, Question: "Is the page shown?", PaneID: "web-1"}
	}))
	if names, _ := toolsSent(t, goalRequests(visual.srv)[0]); !slices.Contains(names, "browser_navigate") {
		t.Errorf("a visual criterion without a browser pane: %v", names)
	}
}

// find_tools finds "save the page as PDF"; the next request offers browser_save_pdf at the
// end of the list, the list before it unchanged, and every later request repeats that
// request's whole prefix (the scripted server's cache log).
func TestFoundToolsAreOfferedAtTheEndAndThePrefixHolds(t *testing.T) {
	t.Parallel()
	reg, _ := engineTools(t)
	r := newRigWith(t, llmtest.Script{Replies: []llmtest.Reply{
		call(tools.ToolFindTools, map[string]string{"query": "save the page as PDF"}),
		call("list_skills", map[string]string{}),
		claim("found it"),
	}}, reg)
	if g, _ := r.run(r.shellSpec()); g.Status != goal.StatusCompleted {
		t.Fatalf("%s: %s", g.Status, g.Report)
	}
	steps, _ := r.svc.Steps(context.Background(), onlyGoal(t, r), 0, 10)
	if len(steps) == 0 || !strings.Contains(steps[0].Result, "- browser_save_pdf: Print the page to a PDF file.") {
		t.Fatalf("find_tools answered %+v", steps)
	}
	reqs := goalRequests(r.srv)
	if len(reqs) != 3 {
		t.Fatalf("%d goal requests", len(reqs))
	}
	first, _ := toolsSent(t, reqs[0])
	second, _ := toolsSent(t, reqs[1])
	third, _ := toolsSent(t, reqs[2])
	if len(second) <= len(first) || !slices.Equal(second[:len(first)], first) || !slices.Contains(second[len(first):], "browser_save_pdf") {
		t.Fatalf("second request's tools %v: not the first's %v with browser_save_pdf after them", second, first)
	}
	if !slices.Equal(third, second) {
		t.Errorf("third request's tools %v, second's %v", third, second)
	}
	// The first request's tools stay the head of the second; the second request, tools and
	// conversation, is all the head of the third.
	if segs, _ := llmtest.CommonPrefix(reqs[0], reqs[1]); segs < len(first) {
		t.Errorf("the second request repeats %d segments of the first, which had %d tools", segs, len(first))
	}
	if segs, _ := llmtest.CommonPrefix(reqs[1], reqs[2]); segs != reqs[1].Segments() {
		t.Errorf("the third request repeats %d of the second's %d segments", segs, reqs[1].Segments())
	}
}

// onlyGoal is the id of the rig's only goal.
func onlyGoal(t *testing.T, r *rig) string {
	gs, err := r.svc.List(context.Background())
	if err != nil || len(gs) != 1 {
		t.Fatalf("goals %v: %v", gs, err)
	}
	return gs[0].ID
}

// A goal cut off by a restart offers, when it resumes, the tools it was offered before, in
// the same order: what find_tools added is read back from the stored conversation.
func TestAResumedGoalOffersTheSameTools(t *testing.T) {
	t.Parallel()
	reg, _ := engineTools(t)
	r := newRigWith(t, llmtest.Script{Replies: []llmtest.Reply{
		call(tools.ToolFindTools, map[string]string{"query": "hand a task to another pane"}),
		llmtest.Stalled("working", 3),
	}}, reg)
	events := r.broker.Subscribe(t.Context())
	g := r.mustStart(r.shellSpec())
	waitEvent(t, events, goal.EventDelta) // the second turn streams: find_tools is done
	r.svc.Shutdown()
	r.broker.Shutdown()
	before := goalRequests(r.srv)
	offered, _ := toolsSent(t, before[len(before)-1])
	if !slices.Contains(offered, "assign_task") {
		t.Fatalf("find_tools added nothing: %v", offered)
	}

	r.srv.Push(claim("done after restart"))
	r.start()
	if err := r.svc.Resume(context.Background(), g.ID); err != nil {
		t.Fatal(err)
	}
	if g, _ = r.wait(g.ID); g.Status != goal.StatusCompleted {
		t.Fatalf("%s: %s", g.Status, g.Report)
	}
	after := goalRequests(r.srv)[len(before):]
	if len(after) == 0 {
		t.Fatal("no request after the resume")
	}
	if resumed, _ := toolsSent(t, after[0]); !slices.Equal(resumed, offered) {
		t.Errorf("resumed with %v, offered %v before", resumed, offered)
	}
}

// find_tools over the app's own tools (engineTools): it finds them by what they do, best
// first, and never one every request carries anyway.
func TestFindToolsFindsByWhatTheyDo(t *testing.T) {
	t.Parallel()
	r, _ := engineTools(t)
	find, ok := r.Get(tools.ToolFindTools)
	if !ok {
		t.Fatal("the app has no find_tools")
	}
	groups := map[string]tools.Group{}
	for _, d := range r.Definitions() {
		groups[d.Name] = tools.GroupOf(d)
	}
	for query, want := range map[string]string{
		"save the page as PDF":           "browser_save_pdf",
		"hand a task to another pane":    "assign_task",
		"maximize a pane":                "maximize_pane",
		"upload a file":                  "browser_set_files",
		"log in with the saved password": "browser_fill_login",
		"run a saved recipe":             "browser_run_recipe",
		"read the cookies":               "browser_get_cookies",
		"navigate to a URL":              "browser_navigate",
		"share context with the others":  "share_context",
		"drag and drop":                  "browser_drag",
	} {
		res, err := find.Run(context.Background(), tools.Call{Name: tools.ToolFindTools, PaneID: "terminal-1",
			Args: json.RawMessage(fmt.Sprintf(`{"query":%q}`, query))})
		found := tools.FoundTools(res.Text)
		if err != nil || res.IsError || len(found) == 0 || found[0] != want {
			t.Errorf("%q found %v, want %s first (%v):\n%s", query, found, want, err, res.Text)
		}
		for _, n := range found {
			if groups[n] == tools.GroupCore {
				t.Errorf("%q found %s, which every request carries", query, n)
			}
		}
	}
}

// The grouping table names only tools the app registers, and every browser tool is offered
// with a browser pane or found: a tool renamed in its family but not in the table would
// silently join the core set.
func TestTheGroupsFitTheAppsTools(t *testing.T) {
	t.Parallel()
	r, _ := engineTools(t)
	groups := map[string]tools.Group{}
	for _, d := range r.Definitions() {
		groups[d.Name] = tools.GroupOf(d)
	}
	for name := range tools.GroupTable() {
		if _, ok := groups[name]; !ok {
			t.Errorf("the grouping table names %s, which the app does not register", name)
		}
	}
	var core []string
	for name, g := range groups {
		if strings.HasPrefix(name, "browser_") && g != tools.GroupBrowser && g != tools.GroupFound {
			t.Errorf("%s is %s", name, g)
		}
		if g == tools.GroupCore {
			core = append(core, name)
		}
	}
	slices.Sort(core)
	if len(core) > maxShellTools || !slices.Contains(core, tools.ToolFindTools) {
		t.Errorf("%d core tools: %v", len(core), core)
	}
}

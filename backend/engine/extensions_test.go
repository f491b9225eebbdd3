package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
	"github.com/clusterspace/clusterspace/backend/mcp/mcptest"
	"github.com/clusterspace/clusterspace/backend/plugins"
	"github.com/clusterspace/clusterspace/backend/tools"
)

// extensionConfig writes a config dir with four plugins and an mcp.json of a working stdio
// server (marked mark) and a missing one.
func extensionConfig(t *testing.T, mark, fetchURL string) string {
	t.Helper()
	cfg := t.TempDir()
	os.MkdirAll(filepath.Join(cfg, "tools"), 0o755)
	files := map[string]string{
		"word_count.js": `module.exports = {
  name: "word_count", description: "Count the words of a text.", risk: "read_only",
  parameters: {type: "object", properties: {text: {type: "string"}}, required: ["text"]},
  run(args) { return {words: args.text.split(/\s+/).filter(Boolean).length} },
};`,
		// No risk declared: it counts as network_write.
		"post_note.js": `module.exports = {
  description: "Post a note to the team's board.",
  parameters: {type: "object", properties: {note: {type: "string"}}, required: ["note"]},
  run(args) { return "posted" },
};`,
		"spin.js": `module.exports = {description: "Think very hard.", risk: "read_only", run() { while (true) {} }};`,
		"weather.js": `module.exports = {
  description: "Today's weather.", risk: "read_only",
  run(args, ctx) {
    try { return ctx.fetch("` + fetchURL + `").text } catch (e) { return "REFUSED " + e.message }
  },
};`,
		"broken.js": "module.exports = {\n  description: \"x\",\n  run() { return ( },\n};",
	}
	for name, src := range files {
		os.WriteFile(filepath.Join(cfg, "tools", name), []byte(src), 0o644)
	}
	cmd, args := mcptest.ServerArgs(mcptest.Serve, mark)
	data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"t":       map[string]any{"command": cmd, "args": args, "risk": "read_only", "tools": map[string]any{"add": map[string]any{"risk": "network_write"}}},
		"missing": map[string]any{"command": "/nonexistent/mcp-server", "env": map[string]string{"TOKEN": "env-s3cr3t-value"}},
	}})
	os.WriteFile(filepath.Join(cfg, "mcp.json"), data, 0o600)
	return cfg
}

// offeredTools lists the tool names a chat request offered the model.
func offeredTools(r llmtest.Request) map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	list, _ := r.JSON["tools"].([]any)
	for _, it := range list {
		fn, _ := it.(map[string]any)["function"].(map[string]any)
		schema, _ := json.Marshal(fn["parameters"])
		out[fmt.Sprint(fn["name"])] = schema
	}
	return out
}

// A goal under a read_only ceiling is offered the plugins and the MCP server's tools; the
// read_only ones run, the ones declared above the ceiling (and a plugin's ctx.fetch, as a call
// of its own) are asked about and, denied, never run; a plugin stuck in while(true){} is ended
// within its bound and the goal goes on; the plugin that does not load and the MCP server
// that does not start are on the goal's rail. The server ends with the engine.
func TestPluginsAndMCPToolsInAGoal(t *testing.T) {
	var fetched atomic.Int32
	// The plugin's address is this test's own: a loopback port can be reused by a client
	// another test left behind (a browser page still reloading), whose request is no fetch of
	// this plugin's. Such strays are logged, answered 404 and not counted.
	token := fmt.Sprintf("/weather-%d", time.Now().UnixNano())
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != token {
			t.Logf("a request this test did not make reached its site: %s %s (%s)", r.Method, r.URL, r.UserAgent())
			http.NotFound(w, r)
			return
		}
		fetched.Add(1)
		fmt.Fprint(w, "sunny")
	}))
	defer site.Close()
	mark := fmt.Sprintf("engine-mcp-%d", time.Now().UnixNano())
	cfg := extensionConfig(t, mark, site.URL+token)

	srv := llmtest.New(t, llmtest.Script{})
	srv.Push(
		llmtest.Calls(llmtest.Call("word_count", map[string]string{"text": "one two three"})),
		llmtest.Calls(llmtest.Call("word_count", map[string]any{"text": "x", "extra": 1})),
		llmtest.Calls(llmtest.Call("post_note", map[string]string{"note": "hello"})),
		llmtest.Calls(llmtest.Call("spin", map[string]any{})),
		llmtest.Calls(llmtest.Call("weather", map[string]any{})),
		llmtest.Calls(llmtest.Call("mcp__t__echo", map[string]string{"text": "hi"})),
		llmtest.Calls(llmtest.Call("mcp__t__add", map[string]int{"a": 1, "b": 2})),
		llmtest.Calls(llmtest.Call(tools.ToolAbortWithReport, map[string]string{"reason": "done testing", "what_was_learned": "tools behave"})),
	)
	var mu sync.Mutex
	var asked []agent.Approval
	deny := func(a agent.Approval) (agent.ApprovalStatus, string, bool) {
		mu.Lock()
		asked = append(asked, a)
		mu.Unlock()
		return agent.ApprovalDeny, "not today", true
	}
	llmCfg := srv.Config()
	eng := openEngine(t, t.TempDir(), WithConfigDir(cfg),
		WithPaneExists(func(string) bool { return true }), WithAutoApprove(deny),
		WithModel(llmCfg))
	defer eng.Close()
	if n := len(mcptest.Processes(mark)); n != 0 {
		t.Fatalf("%d MCP server processes before any goal", n)
	}
	spec := testSpec("term-1", "use the tools", t.TempDir())
	spec.Policy.Ceiling = tools.ReadOnly
	start := time.Now()
	g, err := runGoal(eng, spec, 60*time.Second)
	if err != nil || g.Status != goal.StatusAborted {
		t.Fatalf("goal: %v %s", err, g.Status)
	}
	took := time.Since(start)

	offered := offeredTools(srv.ChatRequests()[0])
	// Plugins are offered up front; an MCP server's tools are found with find_tools (tools
	// offered by need), and a call of one by name still runs (below).
	for _, name := range []string{"word_count", "post_note", "spin", "weather", "find_tools", "list_panes"} {
		if _, ok := offered[name]; !ok {
			t.Errorf("%s was not offered to the model", name)
		}
	}
	if _, ok := offered["broken"]; ok {
		t.Error("the plugin with a syntax error was offered")
	}
	if def, ok := eng.Registry.Get("mcp__t__echo"); !ok || !strings.Contains(string(def.Schema()), `"text"`) {
		t.Errorf("the MCP server's echo tool is not known with its schema")
	}
	if !strings.Contains(string(offered["word_count"]), `"required":["text"]`) {
		t.Errorf("schemas offered: %s / %s", offered["word_count"], offered["mcp__t__echo"])
	}

	steps := goalSteps(t, eng, g.ID, 20)
	want := []struct{ tool, result string }{
		{"word_count", `{"words":3}`},
		{"word_count", `unexpected additional properties ["extra"]`},
		{"post_note", "The user denied this call."},
		{"spin", "plugin spin was ended: it ran longer than its bound of 5s"},
		// The plugin's fetch is a call of its own, decided (and here denied) before it is sent,
		// and a step of the goal's story before the plugin's own.
		{"weather.fetch", "The user denied this call. Their reason: not today"},
		{"weather", "REFUSED ctx.fetch GET " + site.URL + token + " was not allowed: The user denied this call."},
		{"mcp__t__echo", "echo: hi"},
		{"mcp__t__add", "The user denied this call."},
	}
	if len(steps) < len(want) {
		t.Fatalf("steps: %+v", steps)
	}
	for i, w := range want {
		if steps[i].Tool != w.tool || !strings.Contains(steps[i].Result, w.result) {
			t.Errorf("step %d: %s %q, want %s %q", i, steps[i].Tool, steps[i].Result, w.tool, w.result)
		}
	}
	if d := steps[3].DurationMS; d < int64(plugins.CallTimeout/time.Millisecond) || d > int64((plugins.CallTimeout+2*time.Second)/time.Millisecond) {
		t.Errorf("while(true){} took %d ms, want its bound %s", d, plugins.CallTimeout)
	}
	t.Logf("goal took %v; while(true){} ended after %d ms", took, steps[3].DurationMS)
	if fetched.Load() != 0 {
		t.Error("the denied ctx.fetch reached the site")
	}

	mu.Lock()
	var reasons []string
	for _, a := range asked {
		reasons = append(reasons, a.Tool+" "+a.Risk+": "+a.Reason)
	}
	mu.Unlock()
	for _, w := range []string{
		"post_note network_write: post_note is network_write, above this goal's ceiling read_only",
		"weather.fetch network_get: weather.fetch is network_get, above this goal's ceiling read_only",
		"mcp__t__add network_write: mcp__t__add is network_write, above this goal's ceiling read_only",
	} {
		if !strings.Contains(strings.Join(reasons, "\n"), w) {
			t.Errorf("approvals asked lack %q:\n%s", w, strings.Join(reasons, "\n"))
		}
	}
	if len(asked) != 3 {
		t.Errorf("asked %d times, want 3: %v", len(asked), reasons)
	}

	history := goalHistory(t, eng, g.ID)
	var notices []string
	for _, e := range history {
		if e.Type == goal.EventNotice {
			notices = append(notices, string(e.Data))
		}
	}
	all := strings.Join(notices, "\n")
	for _, w := range []string{"broken.js:3", "syntax error", `MCP server missing did not start (command \"/nonexistent/mcp-server\" not found`} {
		if !strings.Contains(all, w) {
			t.Errorf("the goal's rail lacks %q:\n%s", w, all)
		}
	}
	if strings.Contains(all, "env-s3cr3t-value") {
		t.Error("a server's env value reached the goal's events")
	}

	if n := len(mcptest.Processes(mark)); n != 1 {
		t.Errorf("%d MCP server processes while the engine runs, want 1", n)
	}
	eng.Close()
	if pids := mcptest.Processes(mark); len(pids) != 0 {
		t.Fatalf("MCP server processes left after the engine closed: %v", pids)
	}
}

// With a ceiling at network_get the same plugin's ctx.fetch goes through without asking.
func TestPluginFetchAllowedUnderTheCeiling(t *testing.T) {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "sunny") }))
	defer site.Close()
	mark := fmt.Sprintf("engine-mcp-%d", time.Now().UnixNano())
	cfg := extensionConfig(t, mark, site.URL)
	srv := llmtest.New(t, llmtest.Script{})
	srv.Push(
		llmtest.Calls(llmtest.Call("weather", map[string]any{})),
		llmtest.Calls(llmtest.Call(tools.ToolAbortWithReport, map[string]string{"reason": "done testing", "what_was_learned": "fetch works"})),
	)
	llmCfg := srv.Config()
	eng := openEngine(t, t.TempDir(), WithConfigDir(cfg),
		WithPaneExists(func(string) bool { return true }),
		WithAutoApprove(func(a agent.Approval) (agent.ApprovalStatus, string, bool) {
			t.Errorf("asked about %s: %s", a.Tool, a.Reason)
			return agent.ApprovalDeny, "", true
		}),
		WithModel(llmCfg))
	defer eng.Close()
	spec := testSpec("term-1", "weather", t.TempDir())
	spec.Policy.Ceiling = tools.NetworkGet
	g, err := runGoal(eng, spec, 30*time.Second)
	if err != nil || !g.Status.Finished() {
		t.Fatalf("goal: %v %s", err, g.Status)
	}
	steps := goalSteps(t, eng, g.ID, 5)
	if len(steps) < 2 || steps[0].Tool != "weather.fetch" || !strings.Contains(steps[0].Result, "200 OK") || steps[1].Result != "sunny" {
		t.Fatalf("steps: %+v", steps)
	}
}

// The chat is offered the same plugins and MCP tools, runs them, and shows what did not load
// as a notice.
func TestPluginsAndMCPToolsInTheChat(t *testing.T) {
	mark := fmt.Sprintf("engine-chat-mcp-%d", time.Now().UnixNano())
	cfg := extensionConfig(t, mark, "http://127.0.0.1:1/")
	srv := llmtest.New(t, llmtest.Script{})
	srv.Push(
		llmtest.Calls(llmtest.Call("word_count", map[string]string{"text": "one two"}), llmtest.Call("mcp__t__echo", map[string]string{"text": "chat"})),
		llmtest.Text("Two words, and the echo came back."),
	)
	llmCfg := srv.Config()
	eng := openEngine(t, t.TempDir(), WithConfigDir(cfg),
		WithModel(llmCfg))
	defer eng.Close()
	list, _ := eng.Workspaces.List(context.Background())
	wsID := list.Workspaces[0].ID
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	events := eng.Chat.Events().Subscribe(ctx)
	conv, err := eng.Chat.Current(ctx, wsID)
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Chat.Send(ctx, conv, "count and echo", nil); err != nil {
		t.Fatal(err)
	}
	var notices, results []string
	for ev := range events {
		e := ev.Payload
		switch e.Type {
		case "notice":
			notices = append(notices, e.Text)
		case "tool_finished":
			results = append(results, e.Tool.Name+" "+e.Tool.Result)
		}
		if e.Type == "loop_stopped" {
			break
		}
	}
	if got := strings.Join(results, "\n"); !strings.Contains(got, `word_count {"words":2}`) || !strings.Contains(got, "mcp__t__echo echo: chat") {
		t.Errorf("tool results: %s", got)
	}
	if got := strings.Join(notices, "\n"); !strings.Contains(got, "broken.js:3") || !strings.Contains(got, "MCP server missing did not start") {
		t.Errorf("notices: %s", got)
	}
}

// A goal's wall clock reaches an MCP call that never answers: the call is cancelled (the
// server is told, as Ctrl+C would) and the goal ends with its final report soon after its
// time is up, not when the MCP call's own timeout of a minute runs out.
func TestWallClockCutsOffALongMCPCall(t *testing.T) {
	r := newBoundaryRig(t, WithConfigDir(extensionConfig(t, fmt.Sprintf("wallclock-%d", time.Now().UnixNano()), "http://127.0.0.1:1/")))
	r.srv.Push(llmtest.Calls(llmtest.Call("mcp__t__hang", map[string]any{})), llmtest.Text("I was waiting on the MCP server."))
	spec := testSpec(r.ws.Panes[1].ID, "wait on the server", t.TempDir())
	spec.Settings.WallClock = goal.Duration(2 * time.Second)
	spec.Policy.Ceiling = tools.SpendsMoney
	start := time.Now()
	g, err := runGoal(r.eng, spec, 90*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	if g.Status != goal.StatusFailed || !strings.Contains(g.Report, "wall clock") || took > 15*time.Second {
		t.Fatalf("goal %s after %s: %s", g.Status, took, g.Report)
	}
	steps := goalSteps(t, r.eng, g.ID, 5)
	if len(steps) == 0 || steps[0].Tool != "mcp__t__hang" || !strings.Contains(steps[0].Result, "wall clock") {
		t.Fatalf("the MCP call's step: %+v", steps)
	}
}

package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/goal/criterion"
	"github.com/clusterspace/clusterspace/backend/internal/syncbuf"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
	"github.com/clusterspace/clusterspace/backend/logins"
	"github.com/clusterspace/clusterspace/backend/mcp/mcptest"
	"github.com/clusterspace/clusterspace/backend/recipes"
	"github.com/clusterspace/clusterspace/backend/store"
	"github.com/clusterspace/clusterspace/backend/tools"
)

// kitRig is an engine answered by the scripted model server, with one browser pane.
type kitRig struct {
	t   *testing.T
	eng *Engine
	srv *llmtest.Server
	dir string
}

const kitPane = "web-1"

func newKitRig(t *testing.T, startURL string) *kitRig {
	t.Helper()
	srv := llmtest.New(t, llmtest.Script{})
	cfg := srv.Config()
	dir := t.TempDir()
	eng := openEngine(t, dir,
		WithPaneExists(func(string) bool { return true }),
		WithModel(cfg))
	t.Cleanup(func() { eng.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := eng.Browsers.Open(ctx, kitPane, "ws-kit", startURL); err != nil {
		t.Fatal(err)
	}
	return &kitRig{t: t, eng: eng, srv: srv, dir: dir}
}

// goal runs a goal whose model replies as scripted, answering each approval with the next of
// answers (and failing on more questions than answers); it returns the ended goal and the
// questions asked.
func (r *kitRig) goal(ceiling tools.Risk, answers []agent.ApprovalStatus, replies ...llmtest.Reply) (goal.Goal, []agent.Approval) {
	r.t.Helper()
	r.srv.Push(replies...)
	spec := testSpec("term-1", "use the browser", r.t.TempDir())
	spec.Criterion = criterion.Spec{Kind: "shell", Command: "true"}
	spec.Policy.Ceiling = ceiling
	g, err := r.eng.Goals.Start(context.Background(), spec)
	if err != nil {
		r.t.Fatal(err)
	}
	var asked []agent.Approval
	deadline := time.Now().Add(60 * time.Second)
	for {
		if time.Now().After(deadline) {
			r.t.Fatalf("goal %s did not end", g.ID)
		}
		cur, err := r.eng.Goals.Get(context.Background(), g.ID)
		if err != nil {
			r.t.Fatal(err)
		}
		if cur.Status.Finished() {
			return cur, asked
		}
		pending, _ := r.eng.Goals.PendingApprovals(context.Background())
		for _, p := range pending {
			if p.GoalID != g.ID {
				continue
			}
			if len(asked) >= len(answers) {
				r.t.Fatalf("an unexpected question: %+v", p)
			}
			if _, err := r.eng.Goals.AnswerApproval(context.Background(), p.ID, answers[len(asked)], ""); err != nil {
				continue // not waiting yet: asked again on the next poll
			}
			asked = append(asked, p)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (r *kitRig) steps(id string) []goal.Step {
	r.t.Helper()
	return goalSteps(r.t, r.eng, id, 100)
}

func (r *kitRig) eval(js string) string {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v, err := r.eng.Browsers.Evaluate(ctx, kitPane, js)
	if err != nil {
		r.t.Fatal(err)
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return string(v)
	}
	return s
}

func stepLine(steps []goal.Step) string {
	var b strings.Builder
	for _, s := range steps {
		fmt.Fprintf(&b, "\n  %d %s %s err=%v: %.160s", s.Index, s.CallID, s.Tool, s.IsError, s.Result)
	}
	return b.String()
}

func searchSite(t *testing.T) *httptest.Server {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/search":
			fmt.Fprint(w, `<!doctype html><title>Search</title><input id="q"><button id="go" onclick="document.getElementById('out').textContent = 'searched ' + document.getElementById('q').value">Search</button><p id="out">-</p>`)
		default:
			fmt.Fprint(w, `<!doctype html><title>Start</title><p>start</p>`)
		}
	}))
	t.Cleanup(site.Close)
	return site
}

// A recipe the model saves is run on a real Chromium page: a missing param is refused before
// any step runs; with it, every step runs as its own call in the goal's step log; and under a
// lower ceiling the step above it asks the person, whose "no" stops the run there.
func TestRecipeSavedThenRunOnARealPage(t *testing.T) {
	site := searchSite(t)
	r := newKitRig(t, site.URL+"/start")
	recipe := map[string]any{"name": "site search", "description": "Search the site for a query",
		"steps": []map[string]any{
			{"tool": "browser_navigate", "args": map[string]any{"url": site.URL + "/search"}},
			{"tool": "browser_type", "args": map[string]any{"selector": "#q", "text": "{{query}}"}},
			{"tool": "browser_click", "args": map[string]any{"selector": "#go"}},
		}}
	claim := llmtest.Calls(llmtest.Call(tools.ToolClaimComplete, map[string]string{"rationale": "ran it"}))
	g, asked := r.goal(tools.NetworkWrite, nil,
		llmtest.Calls(llmtest.Call("browser_save_recipe", map[string]any{"name": "bad", "steps": []map[string]any{
			{"tool": "browser_type", "args": map[string]any{"selecter": "#q", "text": "x"}}}})),
		llmtest.Calls(llmtest.Call("browser_save_recipe", recipe)),
		llmtest.Calls(llmtest.Call("browser_run_recipe", map[string]any{"name": "site search", "pane_id": kitPane})),
		llmtest.Calls(llmtest.Call("browser_run_recipe", map[string]any{"name": "site search", "pane_id": kitPane, "params": map[string]string{"query": "gophers"}})),
		claim)
	if g.Status != goal.StatusCompleted || len(asked) != 0 {
		t.Fatalf("goal %s, %d questions: %s", g.Status, len(asked), g.Report)
	}
	steps := r.steps(g.ID)
	if len(steps) != 8 {
		t.Fatalf("want 8 steps (bad save, save, refused run, 3 recipe steps, run, claim):%s", stepLine(steps))
	}
	if s := steps[0]; !s.IsError || !strings.Contains(s.Result, `steps[0].args: unknown argument "selecter"`) {
		t.Errorf("a bad step is refused at save, naming the step and field:%s", stepLine(steps[:1]))
	}
	if s := steps[2]; s.Tool != "browser_run_recipe" || !s.IsError || !strings.Contains(s.Result, "needs a value for query; nothing was run") {
		t.Errorf("a missing param is refused before any step:%s", stepLine(steps[2:3]))
	}
	run := steps[3:7]
	for i, want := range []string{"browser_navigate", "browser_type", "browser_click", "browser_run_recipe"} {
		if run[i].Tool != want || run[i].IsError {
			t.Errorf("run step %d: want %s ok:%s", i, want, stepLine(run))
		}
	}
	if !strings.HasPrefix(run[0].CallID, run[3].CallID+".") || !strings.Contains(run[3].Result, "all 3 steps done") {
		t.Errorf("the recipe's steps are its own calls, under the run's id:%s", stepLine(run))
	}
	if got := r.eval("document.getElementById('out').textContent"); got != "searched gophers" {
		t.Errorf("the page after the run: %q", got)
	}
	list, err := r.eng.Recipes.List(context.Background())
	if err != nil || len(list) != 1 || list[0].Name != "site search" || strings.Join(list[0].Params, ",") != "query" {
		t.Fatalf("stored recipes: %+v %v", list, err)
	}

	// Under network_get, typing and clicking are above the ceiling: the run asks for the typing
	// step, the person says no, and the run ends there; the click never runs.
	r.eval("location.href = '" + site.URL + "/start'")
	time.Sleep(300 * time.Millisecond)
	g, asked = r.goal(tools.NetworkGet, []agent.ApprovalStatus{agent.ApprovalDeny},
		llmtest.Calls(llmtest.Call("browser_run_recipe", map[string]any{"name": "site search", "params": map[string]string{"query": "cats"}})),
		claim)
	if len(asked) != 1 || asked[0].Tool != "browser_type" || asked[0].Risk != "network_write" || !strings.Contains(asked[0].Reason, "above this goal's ceiling network_get") {
		t.Fatalf("questions: %+v", asked)
	}
	steps = r.steps(g.ID)
	if len(steps) != 4 || steps[0].Tool != "browser_navigate" || steps[1].Tool != "browser_type" || !steps[1].IsError ||
		!strings.Contains(steps[1].Result, "The user denied this call") || steps[2].Tool != "browser_run_recipe" ||
		!strings.Contains(steps[2].Result, "stopped at step 2 of 3") {
		t.Fatalf("a denied step stops the run:%s", stepLine(steps))
	}
	if got := r.eval("document.getElementById('q').value + '|' + document.getElementById('out').textContent"); got != "|-" {
		t.Errorf("the denied step typed, or the click ran: %q", got)
	}

	// Outside a goal or a chat, nothing would decide the steps: the tool refuses to run them.
	tool, _ := r.eng.Registry.Get(recipes.ToolRun)
	res, err := tool.Run(context.Background(), tools.Call{Name: recipes.ToolRun, Args: json.RawMessage(`{"name":"site search","params":{"query":"x"}}`)})
	if err != nil || !res.IsError || !strings.Contains(res.Text, "runs only inside a goal or a chat") {
		t.Errorf("run outside an agent: %+v %v", res, err)
	}
}

// loginSite serves a login form whose submission would be recorded, by the page and the server.
func loginSite(t *testing.T, submissions *atomic.Int32) *httptest.Server {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			submissions.Add(1)
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><title>Log in</title>
<input id="search" placeholder="Search the docs">
<form id="f" method="post" action="/session">
  <label>E-mail <input id="email" type="email" name="email"></label>
  <label>Password <input id="pw" type="password" name="pw"></label>
  <button id="go">Log in</button>
</form>
<script>window.submitted = 0; document.getElementById('f').addEventListener('submit', () => { window.submitted++; });</script>`)
	}))
	t.Cleanup(site.Close)
	return site
}

// A saved login is filled into a real page's form after the person says yes, even under the
// highest ceiling; the form is not submitted; and the password is nowhere the model, the events
// or the database file could show it. A page whose site has no saved login says so.
func TestSavedLoginFilledNotSubmittedAndNeverLeaks(t *testing.T) {
	var posts atomic.Int32
	site := loginSite(t, &posts)
	other := loginSite(t, &posts)
	r := newKitRig(t, site.URL+"/login")
	const password = "Pw-9Q7x-unlikely-Zebra"
	saved, err := r.eng.Logins.Save(context.Background(), "", logins.Input{Origin: site.URL, Username: "ada@example.com", Password: ptr(password)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.eng.Logins.Save(context.Background(), "", logins.Input{Origin: site.URL + "/other/path", Username: "x", Password: ptr("y")}); err == nil ||
		!strings.Contains(err.Error(), "origin: "+saved.Origin+" already has a saved login") {
		t.Errorf("a second login for the same site: %v", err)
	}

	fill := llmtest.Calls(llmtest.Call(logins.ToolFill, map[string]string{"pane_id": kitPane}))
	g, asked := r.goal(tools.SpendsMoney, []agent.ApprovalStatus{agent.ApprovalAllowScope, agent.ApprovalDeny},
		fill, fill, llmtest.Calls(llmtest.Call(tools.ToolClaimComplete, map[string]string{"rationale": "filled"})))
	if len(asked) != 2 || asked[0].Tool != logins.ToolFill || !strings.Contains(asked[0].Reason, "filling your saved login for "+saved.Origin+" (user ada@example.com)") {
		t.Fatalf("the fill must ask each time, whatever the ceiling or an earlier allow: %+v", asked)
	}
	steps := r.steps(g.ID)
	want := fmt.Sprintf("Filled the saved login for %s as ada@example.com (not submitted).", saved.Origin)
	if len(steps) < 2 || steps[0].Result != want || !steps[1].IsError {
		t.Fatalf("steps:%s", stepLine(steps))
	}
	if got := r.eval("[document.getElementById('email').value, document.getElementById('pw').value, document.getElementById('search').value, window.submitted, location.pathname].join('|')"); got != "ada@example.com|"+password+"||0|/login" {
		t.Errorf("the form after the fill (email|password|search|submitted|path): %q", got)
	}
	time.Sleep(200 * time.Millisecond)
	if n := posts.Load(); n != 0 {
		t.Errorf("the form was submitted %d times", n)
	}

	// Another site has no saved login: the tool says so, asks nothing, fills nothing.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := r.eng.Browsers.Navigate(ctx, kitPane, other.URL+"/login"); err != nil {
		t.Fatal(err)
	}
	g2, asked := r.goal(tools.SpendsMoney, nil, fill, llmtest.Calls(llmtest.Call(tools.ToolClaimComplete, map[string]string{"rationale": "none"})))
	if s := r.steps(g2.ID); len(asked) != 0 || !s[0].IsError || !strings.Contains(s[0].Result, "There is no saved login for "+strings.TrimSuffix(other.URL, "/")) {
		t.Errorf("no saved login: %d questions:%s", len(asked), stepLine(s))
	}
	if got := r.eval("document.getElementById('pw').value"); got != "" {
		t.Errorf("another site got a password: %q", got)
	}

	// Nowhere else: not in any request the model server saw, not in the goals' events or steps,
	// not in the browser's action log, not in the list, not in the database file or its WAL.
	for i, req := range r.srv.Requests() {
		if bytes.Contains(req.Body, []byte(password)) {
			t.Errorf("model request %d holds the password", i)
		}
	}
	for _, id := range []string{g.ID, g2.ID} {
		events := goalHistory(t, r.eng, id)
		if b, _ := json.Marshal(events); bytes.Contains(b, []byte(password)) || len(events) == 0 {
			t.Errorf("goal %s: the events hold the password (or there are none: %d)", id, len(events))
		}
		if b, _ := json.Marshal(r.steps(id)); bytes.Contains(b, []byte(password)) {
			t.Errorf("goal %s: the steps hold the password", id)
		}
	}
	if log, _ := r.eng.Browsers.ActionLog(kitPane, 0); strings.Contains(fmt.Sprint(log), password) {
		t.Errorf("the action log holds the password")
	}
	list, err := r.eng.Logins.List(context.Background())
	must(t, err)
	if b, _ := json.Marshal(list); bytes.Contains(b, []byte(password)) || !bytes.Contains(b, []byte(`"passwordSet":true`)) {
		t.Errorf("the list: %s", b)
	}
	if got, err := r.eng.Logins.Reveal(context.Background(), saved.ID); err != nil || got != password {
		t.Errorf("reveal: %q %v", got, err)
	}
	db := r.dir + "/" + store.FileName
	for _, f := range []string{db, db + "-wal"} {
		b, err := os.ReadFile(f)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(password)) {
			t.Errorf("%s holds the password in plain text", f)
		}
		if f == db && len(b) == 0 {
			t.Errorf("%s is empty", f)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// leakForms are the ways a secret shows in bytes that hold it: as it is, escaped once inside
// a JSON string (a tool's JSON result, a step row), and twice (that result inside a model
// request's body), each as Go (<>& escaped) and as JavaScript write it.
func leakForms(secret string) []string {
	once := []string{secret, jsonEscaped(secret, false), jsonEscaped(secret, true)}
	out := slices.Clone(once)
	for _, f := range once[1:] {
		out = append(out, jsonEscaped(f, false), jsonEscaped(f, true))
	}
	return out
}

func jsonEscaped(s string, html bool) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(html)
	enc.Encode(s)
	quoted := strings.TrimSuffix(b.String(), "\n")
	return quoted[1 : len(quoted)-1]
}

// leaks reports whether b holds secret in any of its forms.
func leaks(b []byte, secret string) bool {
	for _, f := range leakForms(secret) {
		if bytes.Contains(b, []byte(f)) {
			return true
		}
	}
	return false
}

// dbLeaks names the store's files (the database and its WAL) that hold secret.
func dbLeaks(t *testing.T, dataDir, secret string) []string {
	t.Helper()
	var out []string
	db := filepath.Join(dataDir, store.FileName)
	for _, f := range []string{db, db + "-wal"} {
		b, err := os.ReadFile(f)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if leaks(b, secret) {
			out = append(out, filepath.Base(f))
		}
	}
	return out
}

// The first way round: the model has a saved login filled (the person says yes),
// then reads the password field back with browser_execute_js. The script runs, but what comes
// back, is stored as a step, published, and sent in the model's next request is the marker:
// the password is in no model request, no step, no event (stored or live) and not in the
// database file.
func TestPasswordReadBackByAScriptIsMasked(t *testing.T) {
	var posts atomic.Int32
	site := loginSite(t, &posts)
	r := newKitRig(t, site.URL+"/login")
	// A quote in it: the script's JSON result holds it escaped, not as typed.
	const password = `S3cret-"fill"-9Q7x-Zebra`
	if _, err := r.eng.Logins.Save(context.Background(), "", logins.Input{Origin: site.URL, Username: "ada@example.com", Password: ptr(password)}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var live bytes.Buffer
	done := make(chan struct{})
	events := r.eng.SubscribeGoals(ctx)
	go func() {
		defer close(done)
		for ev := range events {
			b, _ := json.Marshal(ev.Payload)
			live.Write(b)
		}
	}()

	fill := llmtest.Calls(llmtest.Call(logins.ToolFill, map[string]string{"pane_id": kitPane}))
	read := llmtest.Calls(llmtest.Call("browser_execute_js", map[string]string{"pane_id": kitPane,
		"code": "document.querySelector('input[type=password]').value"}))
	g, asked := r.goal(tools.SpendsMoney, []agent.ApprovalStatus{agent.ApprovalAllowOnce},
		fill, read, llmtest.Calls(llmtest.Call(tools.ToolClaimComplete, map[string]string{"rationale": "read it"})))
	cancel()
	<-done
	if len(asked) != 1 || asked[0].Tool != logins.ToolFill {
		t.Fatalf("questions: %+v", asked)
	}
	if got := r.eval("document.getElementById('pw').value"); got != password {
		t.Fatalf("the page holds %q, want the filled password", got)
	}
	steps := r.steps(g.ID)
	if len(steps) < 2 || steps[1].Tool != "browser_execute_js" || steps[1].IsError {
		t.Fatalf("steps:%s", stepLine(steps))
	}
	if want := `Result: "[secret: login password]"`; steps[1].Result != want {
		t.Errorf("the script's result as stored: %q, want %q", steps[1].Result, want)
	}

	reqs := r.srv.Requests()
	if len(reqs) < 3 || !bytes.Contains(reqs[2].Body, []byte("[secret: login password]")) {
		t.Errorf("the request after the script lacks the marker (%d requests)", len(reqs))
	}
	for i, req := range reqs {
		if leaks(req.Body, password) {
			t.Errorf("model request %d holds the password", i)
		}
	}
	stored := goalHistory(t, r.eng, g.ID)
	b, _ := json.Marshal(stored)
	if leaks(b, password) || len(stored) == 0 {
		t.Errorf("the goal's stored events hold the password (or there are none: %d)", len(stored))
	}
	if leaks(live.Bytes(), password) || live.Len() == 0 {
		t.Errorf("the goal's live events hold the password (or there are none)")
	}
	if b, _ := json.Marshal(steps); leaks(b, password) {
		t.Errorf("the steps hold the password")
	}
	if files := dbLeaks(t, r.dir, password); len(files) > 0 {
		t.Errorf("the password is in plain text in %v", files)
	}
}

// The second way round, in a chat: an MCP server that hands out its environment gives
// the model the token mcp.json configures for it. What the model, the chat's events, the
// database and the log get is the marker; a short value ("1") is no secret and stays.
func TestMCPTokenEchoedByItsServerIsMasked(t *testing.T) {
	mark := fmt.Sprintf("engine-mask-mcp-%d", time.Now().UnixNano())
	// A quote and <&> in it: the server's JSON holds it escaped, as Go escapes them.
	const token = `tok-"mcp"<&>-S3cret-42`
	cfg := t.TempDir()
	cmd, args := mcptest.ServerArgs(mcptest.Env, mark)
	data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"vault": map[string]any{"command": cmd, "args": args, "risk": "read_only",
			"env": map[string]string{"MCPTEST_TOKEN": token, "MCPTEST_FLAG": "1"}},
	}})
	if err := os.WriteFile(filepath.Join(cfg, "mcp.json"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	srv := llmtest.New(t, llmtest.Script{})
	srv.Push(
		llmtest.Calls(llmtest.Call("mcp__vault__env", map[string]string{"prefix": "MCPTEST_"})),
		llmtest.Text("The server's environment is listed."),
	)
	var logs syncbuf.Buffer
	dir := t.TempDir()
	llmCfg := srv.Config()
	eng, err := Open(context.Background(), dir, WithLogger(slog.New(slog.NewTextHandler(&logs, nil))), WithConfigDir(cfg),
		WithModel(llmCfg))
	if err != nil {
		t.Fatal(err)
	}
	closeEngine := sync.OnceFunc(func() { eng.Close() })
	defer closeEngine()
	list, _ := eng.Workspaces.List(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	events := eng.Chat.Events().Subscribe(ctx)
	conv, err := eng.Chat.Current(ctx, list.Workspaces[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Chat.Send(ctx, conv, "list the server's environment", nil); err != nil {
		t.Fatal(err)
	}
	var live bytes.Buffer
	var result string
	for ev := range events {
		b, _ := json.Marshal(ev.Payload)
		live.Write(b)
		if e := ev.Payload; e.Type == "tool_finished" {
			result = e.Tool.Result
		} else if e.Type == "loop_stopped" {
			break
		}
	}
	if want := `{"MCPTEST_FLAG":"1","MCPTEST_TOKEN":"[secret: MCP server vault env MCPTEST_TOKEN]"}`; result != want {
		t.Errorf("the tool's result: %q, want %q", result, want)
	}
	for i, req := range srv.Requests() {
		if leaks(req.Body, token) {
			t.Errorf("model request %d holds the token", i)
		}
	}
	if leaks(live.Bytes(), token) {
		t.Errorf("the chat's events hold the token")
	}
	closeEngine() // the store's last writes, then its files are read
	if files := dbLeaks(t, dir, token); len(files) > 0 {
		t.Errorf("the token is in plain text in %v", files)
	}
	if leaks(logs.Bytes(), token) {
		t.Errorf("the log holds the token:\n%s", logs.Bytes())
	}
}

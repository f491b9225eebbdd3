package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/internal/syncbuf"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
	"github.com/clusterspace/clusterspace/backend/logins"
	"github.com/clusterspace/clusterspace/backend/mcp/mcptest"
	"github.com/clusterspace/clusterspace/backend/store"
	"github.com/clusterspace/clusterspace/backend/tools"
)

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

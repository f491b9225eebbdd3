package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/agentpane"
	"github.com/clusterspace/clusterspace/backend/config"
	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/goal/criterion"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
	"github.com/clusterspace/clusterspace/backend/tools"
	"github.com/clusterspace/clusterspace/backend/workspace"
)

// boundaryRig is an engine whose goals a scripted model drives, with every approval denied
// and recorded, as `goal run --approve deny` would.
type boundaryRig struct {
	t   *testing.T
	eng *Engine
	srv *llmtest.Server
	ws  workspace.Workspace

	mu    sync.Mutex
	asked []agent.Approval
}

func newBoundaryRig(t *testing.T, opts ...Option) *boundaryRig {
	t.Helper()
	// A goal the test's goal assigns (its description says "walk task") gives up at once.
	assigned := llmtest.Role{Name: "assigned", Match: llmtest.Match{LastUser: "walk task"}, Reply: abort()}
	r := &boundaryRig{t: t, srv: llmtest.New(t, llmtest.Script{Roles: []llmtest.Role{assigned}})}
	cfg := r.srv.Config()
	deny := func(a agent.Approval) (agent.ApprovalStatus, string, bool) {
		r.mu.Lock()
		r.asked = append(r.asked, a)
		r.mu.Unlock()
		return agent.ApprovalDeny, "denied in this test", true
	}
	base := []Option{WithLogger(slog.New(slog.DiscardHandler)), WithAutoApprove(deny),
		WithModel(cfg)}
	eng, err := Open(context.Background(), t.TempDir(), append(base, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	r.eng = eng
	list, err := eng.Workspaces.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	r.ws = list.Workspaces[0]
	return r
}

// confined is a goal confined to sandbox at ceiling in pane.
func confined(pane, sandbox string, ceiling tools.Risk, crit criterion.Spec) goal.Spec {
	spec := testSpec(pane, "test the boundary", sandbox)
	spec.Criterion = crit
	spec.Policy.Ceiling, spec.Policy.SandboxDir = ceiling, sandbox
	return spec
}

// startAndWait starts a goal and waits (bounded) for it to end; the error is Start's (a goal
// refused) or the wait's.
func (r *boundaryRig) startAndWait(spec goal.Spec) (goal.Goal, error) {
	return runGoal(r.eng, spec, 90*time.Second)
}

// run starts a goal confined to sandbox at ceiling in pane, pushes the replies and waits.
func (r *boundaryRig) run(pane, sandbox string, ceiling tools.Risk, crit criterion.Spec, replies ...llmtest.Reply) goal.Goal {
	r.t.Helper()
	r.srv.Push(replies...)
	g, err := r.startAndWait(confined(pane, sandbox, ceiling, crit))
	if err != nil || !g.Status.Finished() {
		r.t.Fatalf("goal did not end: %v %s", err, g.Status)
	}
	return g
}

// results are the goal's step results by step index (1-based).
func (r *boundaryRig) results(id string) map[int]string {
	r.t.Helper()
	out := map[int]string{}
	for _, s := range goalSteps(r.t, r.eng, id, 100) {
		out[s.Index] = s.Tool + ": " + s.Result
	}
	return out
}

func (r *boundaryRig) askedAbout(want string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, a := range r.asked {
		if strings.Contains(a.Reason, want) {
			return true
		}
	}
	return false
}

func shell(pane, line string) llmtest.Reply {
	return llmtest.Calls(llmtest.Call("write_to_terminal", map[string]any{"pane_id": pane, "text": line, "wait_timeout_ms": 15000}))
}

func abort() llmtest.Reply {
	return llmtest.Calls(llmtest.Call(tools.ToolAbortWithReport, map[string]string{"reason": "done testing", "what_was_learned": "the boundary held"}))
}

func exists(path string) bool { _, err := os.Stat(path); return err == nil }

// A pane the goal makes is inside its boundary (its shell confined as the goal's own), a
// pane of the person's is not (reaching it asks, and here is denied), and the goal's own
// confined tab works as before.
func TestConfinedGoalBoundaryCoversThePanesItMakes(t *testing.T) {
	r := newBoundaryRig(t)
	person, own := r.ws.Panes[0].ID, r.ws.Panes[1].ID
	if _, err := r.eng.Panes.StartTerminal(context.Background(), r.ws, r.ws.Panes[0], 0, 0); err != nil {
		t.Fatal(err)
	}
	sandbox, outside := t.TempDir(), t.TempDir()
	made := llmtest.Reply{Compute: func(req llmtest.Request) llmtest.Reply {
		var res struct {
			PaneIDs []string `json:"pane_ids"`
		}
		if err := json.Unmarshal([]byte(req.LastToolResult()), &res); err != nil || len(res.PaneIDs) == 0 {
			return llmtest.Text("create_workspace gave no pane: " + req.LastToolResult())
		}
		return shell(res.PaneIDs[0], "touch "+filepath.Join(outside, "made-escape")+"; echo made-$((1+1))-done")
	}}
	g := r.run(own, sandbox, tools.WriteLocal, criterion.Spec{Kind: "manual"},
		llmtest.Calls(llmtest.Call("create_workspace", map[string]any{"name": "made", "rows": 1, "cols": 1})),
		made,
		shell(person, "touch "+filepath.Join(outside, "person-escape")),
		shell(own, "touch inside-ok && echo own-$((2+2))-done"),
		abort())
	res := r.results(g.ID)
	if exists(filepath.Join(outside, "made-escape")) || !strings.Contains(res[2], "made-2-done") {
		t.Errorf("the pane the goal made was not confined:\n%s", res[2])
	}
	if exists(filepath.Join(outside, "person-escape")) || !strings.Contains(res[3], "denied") {
		t.Errorf("the goal typed into the person's pane:\n%s", res[3])
	}
	if !r.askedAbout("outside this goal's sandbox") {
		t.Errorf("reaching the person's pane did not ask the person: %+v", r.asked)
	}
	if !exists(filepath.Join(sandbox, "inside-ok")) || !strings.Contains(res[4], "own-4-done") {
		t.Errorf("the goal's own confined shell did not work:\n%s", res[4])
	}
}

// Chromium's DevTools port listens on this machine's loopback with no login. A confined goal,
// even at network_write, reaches it neither from its shell (directly or through its proxy)
// nor by pointing a browser pane at it.
func TestConfinedGoalCannotReachDevTools(t *testing.T) {
	r := newBoundaryRig(t)
	browserPane, own := r.ws.Panes[0].ID, r.ws.Panes[1].ID
	ctx := context.Background()
	if _, _, err := r.eng.Browsers.Ensure(ctx, browserPane, r.ws.ID, "about:blank"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(r.eng.Browsers.ProfileDir(r.ws.ID), "DevToolsActivePort"))
	if err != nil {
		t.Fatal(err)
	}
	port := strings.SplitN(string(b), "\n", 2)[0]
	devtools := "http://127.0.0.1:" + port + "/json/version"
	resp, err := http.Get(devtools) // control: it answers anyone on this machine
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "webSocketDebuggerUrl") {
		t.Fatalf("control: DevTools did not answer: %s", body)
	}
	g := r.run(own, t.TempDir(), tools.NetworkWrite, criterion.Spec{Kind: "manual"},
		shell(own, fmt.Sprintf("curl -s -m 5 %s; echo; (exec 3<>/dev/tcp/127.0.0.1/%s) 2>/dev/null && echo direct-open || echo direct-$((1+1))-refused", devtools, port)),
		llmtest.Calls(llmtest.Call("browser_navigate", map[string]string{"pane_id": browserPane, "url": devtools})),
		abort())
	res := r.results(g.ID)
	if strings.Contains(res[1], "webSocketDebuggerUrl") || !strings.Contains(res[1], "outside a confined goal's reach") || !strings.Contains(res[1], "direct-2-refused") {
		t.Errorf("the goal's shell reached DevTools:\n%s", res[1])
	}
	if strings.Contains(res[2], "webSocketDebuggerUrl") || !strings.Contains(res[2], "Refused by the goal's policy") {
		t.Errorf("the goal's browser reached DevTools:\n%s", res[2])
	}
}

// A check the model wrote runs inside the goal's sandbox; the person's own check runs as
// their command, outside it, and the goal's story says so.
func TestModelWrittenCheckRunsInTheSandbox(t *testing.T) {
	r := newBoundaryRig(t)
	own := r.ws.Panes[1].ID
	outside := t.TempDir()
	check := func(name string) criterion.Spec {
		escape := filepath.Join(outside, name)
		return criterion.Spec{Kind: criterion.KindShell, Command: "touch " + escape + "; test -e " + escape}
	}
	claim := llmtest.Calls(llmtest.Call(tools.ToolClaimComplete, map[string]string{"rationale": "done"}))

	byModel := check("model-check-escape")
	byModel.ByModel = true
	g := r.run(own, t.TempDir(), tools.WriteLocal, byModel, claim, abort())
	if exists(filepath.Join(outside, "model-check-escape")) || g.Status == goal.StatusCompleted {
		t.Errorf("the model's check wrote outside the sandbox (goal %s)", g.Status)
	}

	g = r.run(own, t.TempDir(), tools.WriteLocal, check("person-check"), claim)
	if !exists(filepath.Join(outside, "person-check")) || g.Status != goal.StatusCompleted {
		t.Errorf("the person's check did not run as their command (goal %s)", g.Status)
	}
	events := goalHistory(t, r.eng, g.ID)
	var story strings.Builder
	for _, e := range events {
		story.Write(e.Data)
	}
	if !strings.Contains(story.String(), "written by the person, so it runs outside the sandbox") {
		t.Errorf("the goal's story does not say its check runs outside the sandbox")
	}
}

// No confined goal reads the app's data dir, another ClusterSpace data dir, the config dir's
// mcp.json, serve's password file, or the environment of the app that started it.
func TestConfinedGoalCannotReadTheAppsSecrets(t *testing.T) {
	other := t.TempDir()
	for _, f := range []string{"jwt.key", "secrets.key"} {
		if err := os.WriteFile(filepath.Join(other, f), []byte("TOPSECRET-other-"+f), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := config.RememberDataDir(other); err != nil {
		t.Fatal(err)
	}
	configDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(configDir, "mcp.json"), []byte(`{"mcpServers": {"x": {"url": "http://127.0.0.1:1/mcp", "headers": {"Authorization": "Bearer TOPSECRET-token"}}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	pw := filepath.Join(t.TempDir(), "serve-password")
	if err := os.WriteFile(pw, []byte("TOPSECRET-password\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := newBoundaryRig(t, WithConfigDir(configDir), WithSecretFiles(pw))
	own := r.ws.Panes[1].ID
	probe := strings.Join([]string{
		"cat " + filepath.Join(other, "jwt.key"), "cat " + filepath.Join(r.eng.DataDir, "jwt.key"),
		"cat " + filepath.Join(configDir, "mcp.json"), "cat " + pw,
		fmt.Sprintf("tr '\\0' '\\n' < /proc/%d/environ | head -3", os.Getpid()),
		"echo probe-$((1+1))-done",
	}, "; ")
	g := r.run(own, t.TempDir(), tools.NetworkWrite, criterion.Spec{Kind: "manual"}, shell(own, probe), abort())
	res := r.results(g.ID)
	if strings.Contains(res[1], "TOPSECRET") || strings.Contains(res[1], "PATH=") || !strings.Contains(res[1], "probe-2-done") {
		t.Errorf("a confined goal read what it may not:\n%s", res[1])
	}
}

// A goal whose boundary cannot be made (here: a sandbox inside the app's own data dir, which a
// confined shell may not read) does not run, and says why; it never goes on unconfined.
func TestGoalWhoseBoundaryCannotBeMadeDoesNotRun(t *testing.T) {
	r := newBoundaryRig(t)
	inside := filepath.Join(r.eng.DataDir, "work")
	if err := os.Mkdir(inside, 0o700); err != nil {
		t.Fatal(err)
	}
	g, err := r.startAndWait(confined(r.ws.Panes[1].ID, inside, tools.WriteLocal, criterion.Spec{Kind: "manual"}))
	if err == nil && g.Status != goal.StatusFailed {
		t.Fatalf("a goal without its boundary ran: %s", g.Status)
	}
	if err == nil && !strings.Contains(g.Report, "sandbox") {
		t.Fatalf("the goal did not say why it stopped: %+v", g)
	}
	if err != nil && !strings.Contains(err.Error(), "must not read") {
		t.Fatalf("the refusal does not say why: %v", err)
	}
	if n := len(r.srv.ChatRequests()); n != 0 {
		t.Fatalf("the model was asked %d times by a goal that must not run", n)
	}
	for _, tab := range r.eng.Terminals.Tabs(r.ws.Panes[1].ID) {
		if !tab.Confined {
			t.Fatalf("an unconfined shell was started for it: %+v", tab)
		}
	}
}

// Without its sandbox engine (bubblewrap not installed) a confined goal does not start: the
// error says what to install.
func TestConfinedGoalWithoutBubblewrapDoesNotStart(t *testing.T) {
	r := newBoundaryRig(t)
	t.Setenv("PATH", t.TempDir()) // no bwrap on it
	g, err := r.startAndWait(confined(r.ws.Panes[1].ID, t.TempDir(), tools.WriteLocal, criterion.Spec{Kind: "manual"}))
	if err == nil {
		err = fmt.Errorf("%s: %s", g.Status, g.Report)
	}
	if !strings.Contains(fmt.Sprint(err), "bwrap") || strings.Contains(fmt.Sprint(err), "completed") {
		t.Fatalf("a goal without bubblewrap: %v", err)
	}
	if n := len(r.srv.ChatRequests()); n != 0 {
		t.Fatalf("the model was asked %d times by a goal that must not run", n)
	}
}

// The MCP servers' addresses the egress proxy never opens to a goal: host:port with the
// scheme's port when the URL names none.
func TestHostPortOfAnMCPServerURL(t *testing.T) {
	for raw, want := range map[string]string{
		"http://127.0.0.1:8931/mcp": "127.0.0.1:8931", "https://tools.example/mcp": "tools.example:443",
		"http://localhost/mcp": "localhost:80", "http://[::1]:9000/": "[::1]:9000", "": "", "stdio": "",
	} {
		if got := agentpane.HostPort(raw); got != want {
			t.Errorf("hostPort(%q) = %q, want %q", raw, got, want)
		}
	}
}

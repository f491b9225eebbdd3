package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/cli"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

// runGoalCLI runs `clusterspace goal run` (the built binary) against a scripted model server.
func runGoalCLI(t *testing.T, script llmtest.Script, args ...string) (int, string, string) {
	t.Helper()
	return runGoalCLIOn(t, llmtest.New(t, script), args...)
}

// goalRunCmd is `clusterspace goal run` against srv, working in dir, on dataDir, with args
// added: asks are denied and no critic runs.
func goalRunCmd(t *testing.T, srv *llmtest.Server, dir, dataDir string, args ...string) *exec.Cmd {
	t.Helper()
	base := []string{"goal", "run", "--base-url", srv.OpenAIURL(), "--model", "scripted",
		"--data-dir", dataDir, "--approve", "deny", "--critic-every", "0"}
	cmd := exec.Command(testBinary(t), append(base, args...)...)
	cmd.Dir = dir
	return cmd
}

// runGoalCLIOn is runGoalCLI against a server the test keeps, to look at its requests.
func runGoalCLIOn(t *testing.T, srv *llmtest.Server, args ...string) (int, string, string) {
	t.Helper()
	sandbox := t.TempDir()
	return runToEnd(t, goalRunCmd(t, srv, sandbox, t.TempDir(), append([]string{"--sandbox", sandbox}, args...)...))
}

// runGoalCLIUnconfined is runGoalCLIOn without --sandbox: a goal in its work dir, whose MCP
// calls run as they are decided (a confined goal's are asked every time).
func runGoalCLIUnconfined(t *testing.T, srv *llmtest.Server, args ...string) (int, string, string) {
	t.Helper()
	return runToEnd(t, goalRunCmd(t, srv, t.TempDir(), t.TempDir(), args...))
}

func toolCall(name string, args any) llmtest.Reply { return llmtest.Calls(llmtest.Call(name, args)) }

// goalEvent is one line of what `goal run --json` (and resume, reopen) prints.
type goalEvent struct {
	Type   string         `json:"type"`
	GoalID string         `json:"goalId"`
	Data   map[string]any `json:"data"`
}

// goalEvents decodes what a goal command printed with --json: JSON Lines, every line an event
// (the last one the end, with the report). A line that is no JSON fails the test.
func goalEvents(t *testing.T, out string) []goalEvent {
	t.Helper()
	var evs []goalEvent
	for line := range strings.Lines(strings.TrimSpace(out)) {
		var e goalEvent
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("not a JSON line: %q\n%s", line, out)
		}
		evs = append(evs, e)
	}
	if len(evs) == 0 {
		t.Fatal("the goal command printed no event")
	}
	return evs
}

func TestGoalCLICompletesThroughARealTerminal(t *testing.T) {
	code, out, errs := runGoalCLI(t, llmtest.Script{Replies: []llmtest.Reply{
		toolCall("write_to_terminal", map[string]string{"pane_id": "term-1", "text": "echo ok > done.txt"}),
		toolCall("claim_complete", map[string]string{"rationale": "done.txt written"}),
	}}, "--goal", "Write done.txt", "--check-shell", "test -s done.txt")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	wantOutput(t, out, "confined by the kernel", "step 1    ok  write_to_terminal", "verify    passed", "ended     completed")
}

func TestGoalCLIFailedAndAbortedExitCodes(t *testing.T) {
	code, out, _ := runGoalCLI(t, llmtest.Script{Replies: []llmtest.Reply{
		toolCall("claim_complete", map[string]string{"rationale": "trust me"}),
	}}, "--goal", "Write done.txt", "--check-shell", "test -s done.txt", "--bounce-budget", "1")
	if code != cli.ExitGoalFailed || !strings.Contains(out, "verify    FAILED (1/1): Shell exited 1, wanted 0") {
		t.Fatalf("failed goal: exit %d\n%s", code, out)
	}

	code, out, _ = runGoalCLI(t, llmtest.Script{Replies: []llmtest.Reply{
		toolCall("abort_with_report", map[string]string{"reason": "no compiler installed", "what_was_learned": "gcc is missing"}),
	}}, "--goal", "Build it", "--check-manual", "--json")
	if code != cli.ExitGoalAborted {
		t.Fatalf("aborted goal: exit %d\n%s", code, out)
	}
	// --json prints JSON Lines: every line an event, the last one the end with the report.
	evs := goalEvents(t, out)
	last := evs[len(evs)-1]
	if report, _ := last.Data["report"].(string); last.Type != "ended" || last.Data["status"] != "aborted" || !strings.Contains(report, "gcc is missing") {
		t.Fatalf("last event %+v", last)
	}
}

func TestGoalCLIRefusesBadUsageWith64(t *testing.T) {
	cases := map[string][]string{
		"give exactly one criterion": {"--goal", "x", "--check-shell", "true", "--check-manual"},
		"policy.allowedTools":        {"--goal", "x", "--check-manual", "--allow-tools", "teleport"},
		"goal: must not be empty":    {"--check-manual"},
		"--risk":                     {"--goal", "x", "--check-manual", "--risk", "yolo"},
		"criterion.command":          {"--goal", "x", "--check-shell", "if then fi ("},
		"--context-window 100":       {"--goal", "x", "--check-manual", "--context-window", "100"},
	}
	for want, args := range cases {
		code, _, errs := runGoalCLI(t, llmtest.Script{}, args...)
		if code != cli.ExitUsage || !strings.Contains(errs, want) {
			t.Errorf("%v: exit %d, stderr %q (want 64 and %q)", args, code, errs, want)
		}
	}
	// The sandbox dir must exist.
	code, _, errs := runGoalCLI(t, llmtest.Script{}, "--goal", "x", "--check-manual", "--sandbox", filepath.Join(os.TempDir(), "no-such-sandbox-dir"))
	if code != cli.ExitUsage || !strings.Contains(errs, "sandboxDir") {
		t.Errorf("missing sandbox: exit %d %q", code, errs)
	}
}

// A goal told its model's window with --context-window, on a server that refuses anything
// longer (an endpoint whose window no table knows): it is never refused, the conversation is
// compacted instead, and the goal completes.
func TestGoalCLIContextWindowCompactsInsteadOfOverflowing(t *testing.T) {
	const window = 16000
	var replies []llmtest.Reply
	for i := range 40 {
		replies = append(replies, toolCall("write_to_terminal", map[string]string{"pane_id": "term-1",
			"text": fmt.Sprintf("echo 'step %d: %s'\n", i, strings.Repeat("x", 300))}))
	}
	replies = append(replies, toolCall("claim_complete", map[string]string{"rationale": "done"}))
	srv := llmtest.New(t, llmtest.Script{Replies: replies, ContextLimit: window, Roles: []llmtest.Role{{Name: "summary",
		Match: llmtest.Match{System: "You compact the history"}, Reply: llmtest.Text("Summary: forty echoes were written.")}}})
	code, out, errs := runGoalCLIOn(t, srv, "--goal", "Echo forty lines", "--check-shell", "true", "--context-window", fmt.Sprint(window))
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	compacted := false
	for _, q := range srv.ChatRequests() {
		if q.Answer == "context_length_exceeded" {
			t.Fatalf("a request was refused as too long: the window was not honoured")
		}
		compacted = compacted || strings.Contains(string(q.Body), "[Earlier in this session")
	}
	if !compacted || !strings.Contains(out, "compact   #1: older steps summarised") {
		t.Fatalf("the conversation was never compacted, or the CLI did not say so:\n%s", out)
	}
}

// TestGoalCLIKillMidGoalThenResume kills `goal run` with SIGKILL while the model is streaming
// its second turn, then resumes the goal in a new process: it completes, and every step the
// first process had recorded is still there, numbered without a gap.
func TestGoalCLIKillMidGoalThenResume(t *testing.T) {
	srv := llmtest.New(t, llmtest.Script{Replies: []llmtest.Reply{
		toolCall("write_to_terminal", map[string]string{"pane_id": "term-1", "text": "echo one > one.txt"}),
		llmtest.Stalled("thinking about the next file", 3),
	}})
	sandbox, dataDir := t.TempDir(), t.TempDir()
	model := []string{"--base-url", srv.OpenAIURL(), "--model", "scripted", "--data-dir", dataDir}
	run := exec.Command(testBinary(t), append([]string{"goal", "run", "--goal", "Write one.txt and two.txt",
		"--check-shell", "test -s one.txt && test -s two.txt", "--sandbox", sandbox, "--critic-every", "0", "--json"}, model...)...)
	run.Dir = sandbox
	stdout, _ := run.StdoutPipe()
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	var goalID string
	sc := bufio.NewScanner(stdout)
	for sc.Scan() { // read until step 1 is reported: it is in the store by then
		var e struct {
			GoalID string `json:"goalId"`
			Type   string `json:"type"`
		}
		json.Unmarshal(sc.Bytes(), &e)
		goalID = e.GoalID
		if e.Type == "step" {
			break
		}
	}
	// The second turn is streaming (and stalls).
	waitFor(t, "the second model turn to start", func() bool { return len(srv.ChatRequests()) >= 2 })
	run.Process.Kill() // SIGKILL: no chance to save anything more
	run.Wait()

	srv.Push(toolCall("write_to_terminal", map[string]string{"pane_id": "term-1", "text": "echo two > two.txt"}),
		toolCall("claim_complete", map[string]string{"rationale": "both files written"}))
	code, out, errs := runToEnd(t, exec.Command(testBinary(t), append([]string{"goal", "resume", goalID, "--json"}, model...)...))
	if code != cli.ExitOK {
		t.Fatalf("resume: exit %d\n%s\n%s", code, out, errs)
	}
	// resume prints the goal's whole story from the store: step 1 from before the kill, the
	// interruption found at start-up, then the steps of the resumed run.
	var story []string
	for _, e := range goalEvents(t, out) {
		switch e.Type {
		case "step":
			story = append(story, fmt.Sprint("step ", e.Data["index"]))
		case "status", "resumed", "ended":
			story = append(story, fmt.Sprint(e.Type, " ", e.Data["status"]))
		}
	}
	want := "status pending|step 1|status interrupted|resumed <nil>|step 2|step 3|ended completed"
	if got := strings.Join(story, "|"); got != want {
		t.Fatalf("story %s\nwant  %s\n%s", got, want, out)
	}
	code, show, errs := runBinary(t, "goal", "show", goalID, "--json", "--data-dir", dataDir)
	if code != cli.ExitOK {
		t.Fatalf("goal show: exit %d\n%s", code, errs)
	}
	var g struct {
		Status string
		State  struct{ Steps int }
	}
	json.Unmarshal([]byte(show), &g)
	if g.Status != "completed" || g.State.Steps != 3 {
		t.Fatalf("after resume: %s", show)
	}
	wantFiles(t, sandbox, "one.txt", "two.txt")
}

// --check-visual: the run opens a blank browser pane, the agent drives it with the browser
// tools, and on each claim a vision model judges a screenshot of it — not the agent's words.
func TestGoalCLIVisualCheckFailsThenPasses(t *testing.T) {
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<title>Status</title><h1 style="color:green">All systems go</h1>`)
	}))
	defer page.Close()
	// Critic off, so the requests come in this order: actor, judge, actor, actor, judge.
	srv := llmtest.New(t, llmtest.Script{Replies: []llmtest.Reply{
		toolCall("claim_complete", map[string]string{"rationale": "the status page is up"}),
		llmtest.Text("NO\nThe page is blank."),
		toolCall("browser_navigate", map[string]string{"pane_id": "web-1", "url": page.URL}),
		toolCall("claim_complete", map[string]string{"rationale": "now it shows the status"}),
		llmtest.Text("YES\nA green heading says all systems go."),
	}})
	code, out, errs := runGoalCLIOn(t, srv, "--goal", "Open the status page", "--risk", "network_get",
		"--check-visual", "Does the page say all systems go?", "--vision-model", "scripted-vision")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	wantOutput(t, out, "The page is blank", "A green heading says all systems go", "ended     completed")
	var judged int
	for _, r := range srv.ChatRequests() {
		body := string(r.Body)
		if strings.Contains(body, "strict visual judge") {
			judged++
			if !strings.Contains(body, `"model":"scripted-vision"`) || !strings.Contains(body, "data:image/png;base64,") {
				t.Errorf("judge request %d lacks the vision model or the screenshot", judged)
			}
		}
	}
	if judged != 2 {
		t.Fatalf("%d judge requests, want 2", judged)
	}
}

func TestGoalCLIVisualFlagsRefusedOutOfPlace(t *testing.T) {
	code, _, errs := runGoalCLI(t, llmtest.Script{}, "--goal", "x", "--check-manual", "--visual-pane", "web-2")
	if code != 64 || !strings.Contains(errs, "--visual-pane goes with --check-visual") {
		t.Errorf("--visual-pane without a visual check: exit %d, %s", code, errs)
	}
	out, err := exec.Command(testBinary(t), "goal", "run", "--goal", "x", "--check-manual", "--provider", "p",
		"--vision-model", "v", "--data-dir", t.TempDir()).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 64 || !strings.Contains(string(out), "--vision-model goes with --base-url") {
		t.Errorf("--vision-model with a stored provider: %v, %s", err, out)
	}
}

// gitRun runs git in dir, with an identity of its own so a machine without one commits too.
func gitRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v: %s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// gitRepo makes dir a git repository on main whose first commit holds files (name: content;
// an empty commit when there are none), and returns dir.
func gitRepo(t *testing.T, dir string, files map[string]string) string {
	t.Helper()
	writeFiles(t, dir, files)
	gitRun(t, dir, "init", "-q", "-b", "main")
	gitRun(t, dir, "add", ".")
	gitRun(t, dir, "commit", "-q", "--allow-empty", "-m", "base")
	return dir
}

// `goal run --worktree` works in a worktree and branch of its own: the agent's shell writes
// there, the check passes there, the person's checkout (with its uncommitted change) is left
// as it was, the work is committed on the branch, and the report names the branch and its
// diff stat; goal show names the branch.
func TestGoalCLIRunsInItsOwnWorktree(t *testing.T) {
	repo, dataDir := gitRepo(t, t.TempDir(), map[string]string{"README": "hello\n"}), t.TempDir()
	os.WriteFile(filepath.Join(repo, "README"), []byte("hello, half-edited\n"), 0o644)
	head := gitRun(t, repo, "rev-parse", "HEAD")

	out := runGoalInWorktree(t, repo, dataDir, "echo ok > made.txt", "test -f made.txt")
	wantOutput(t, out, "step 1    ok  write_to_terminal", "verify    passed", "ended     completed", "made.txt | 1 +")
	id, dir := goalWorktree(t, out)
	if want := filepath.Join(repo, ".git", "clusterspace-worktrees", id); dir != want {
		t.Fatalf("worktree %s, want %s", dir, want)
	}
	if got := gitRun(t, repo, "show", "goal/"+id+":made.txt"); got != "ok" {
		t.Fatalf("made.txt on the branch is %q", got)
	}
	if _, err := os.Stat(filepath.Join(repo, "made.txt")); !os.IsNotExist(err) {
		t.Fatalf("made.txt reached the person's checkout (%v)", err)
	}
	if b, _ := os.ReadFile(filepath.Join(repo, "README")); string(b) != "hello, half-edited\n" || gitRun(t, repo, "rev-parse", "HEAD") != head {
		t.Fatalf("the person's checkout changed: README %q", b)
	}
	if st := gitRun(t, repo, "status", "--porcelain"); st != "M README" {
		t.Fatalf("the person's checkout's status is %q, want only their own edit", st)
	}

	code, out, errs := runBinary(t, "goal", "show", id, "--data-dir", dataDir)
	if code != 0 {
		t.Fatalf("goal show: exit %d\n%s\n%s", code, out, errs)
	}
	wantOutput(t, out, "BRANCH: goal/"+id+" (onto main), worktree "+dir)
}

// --worktree outside a git repository is refused with 64, naming the field and the dir.
func TestGoalCLIWorktreeNeedsARepository(t *testing.T) {
	code, _, errs := runGoalCLI(t, llmtest.Script{}, "--goal", "x", "--check-manual", "--worktree")
	if code != cli.ExitUsage || !strings.Contains(errs, "worktree: ") || !strings.Contains(errs, "git init it and commit once, or drop --worktree") {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
}

var goalWorktreeRe = regexp.MustCompile(`Branch: goal/(goal-[0-9a-f]+) \(worktree (\S+)\)`)

// goalWorktree reads the goal's id and its worktree's dir from the report `goal run --worktree`
// printed.
func goalWorktree(t *testing.T, out string) (id, dir string) {
	t.Helper()
	m := goalWorktreeRe.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("the report names no branch:\n%s", out)
	}
	return m[1], m[2]
}

// runGoalInWorktree runs `goal run --worktree` in repo (its sandbox) on dataDir: the
// scripted agent types command into its terminal and claims, checked by check. It fails the
// test unless the goal completes, and returns what the command printed.
func runGoalInWorktree(t *testing.T, repo, dataDir, command, check string, extra ...string) string {
	t.Helper()
	srv := llmtest.New(t, llmtest.Script{Replies: []llmtest.Reply{
		toolCall("write_to_terminal", map[string]string{"pane_id": "term-1", "text": command}),
		toolCall("claim_complete", map[string]string{"rationale": "made.txt written"}),
	}})
	code, out, errs := runToEnd(t, goalRunCmd(t, srv, repo, dataDir, append([]string{"--sandbox", repo, "--worktree",
		"--goal", "Write made.txt", "--check-shell", check}, extra...)...))
	if code != 0 {
		t.Fatalf("goal run --worktree: exit %d\n%s\n%s", code, out, errs)
	}
	return out
}

// `goal run --persona ID` works as a persona of the config dir (here one that overrides the
// built-in reviewer): its prompt, temperature and max_tokens reach the model; an unknown
// persona or skill exits 64 naming it, before any model is asked.
func TestGoalCLIPersona(t *testing.T) {
	configDir := t.TempDir()
	writeFiles(t, configDir, map[string]string{"personas/reviewer.md": "---\nname: House reviewer\ntemperature: 0.15\nmax_tokens: 2048\n---\nHOUSE-REVIEWER: read the diff first.\n"})

	srv := llmtest.New(t, llmtest.Script{Replies: []llmtest.Reply{
		toolCall("claim_complete", map[string]string{"rationale": "reviewed"}),
	}})
	code, out, errs := runGoalCLIOn(t, srv, "--goal", "Review nothing", "--check-shell", "true",
		"--persona", "reviewer", "--skill", "bug-reproduction", "--config-dir", configDir)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(out, "persona: reviewer") {
		t.Errorf("the run's output does not say which persona works:\n%s", out)
	}
	reqs := srv.ChatRequests()
	if len(reqs) == 0 {
		t.Fatal("no model request")
	}
	req := reqs[0]
	if !strings.Contains(req.System, "HOUSE-REVIEWER") || !strings.Contains(req.System, "Reproducing a bug") {
		t.Errorf("system prompt lacks the persona's file or the skill:\n%s", req.System)
	}
	if req.JSON["temperature"] != 0.15 || req.JSON["max_tokens"] != float64(2048) {
		t.Errorf("temperature %v, max_tokens %v: want the persona's 0.15 and 2048", req.JSON["temperature"], req.JSON["max_tokens"])
	}

	for flag, args := range map[string][]string{
		"persona": {"--persona", "nobody"},
		"skill":   {"--skill", "nobody"},
	} {
		srv := llmtest.New(t, llmtest.Script{})
		code, _, errs := runGoalCLIOn(t, srv, append([]string{"--goal", "x", "--check-manual", "--config-dir", configDir}, args...)...)
		if code != cli.ExitUsage || !strings.Contains(errs, flag) || !strings.Contains(errs, `"nobody"`) {
			t.Errorf("--%s nobody: exit %d, stderr %q (want 64 naming the %s and the id)", flag, code, errs, flag)
		}
		if n := len(srv.ChatRequests()); n != 0 {
			t.Errorf("--%s nobody: %d model requests, want none", flag, n)
		}
	}
}

// A fleet task's `persona:` shapes that task's agent only; an unknown one is refused with 64,
// naming the task and the field, before anything runs.
func TestFleetCLIPersonaPerTask(t *testing.T) {
	m := newFleetModel(t, func(string, int) llmtest.Reply { return fleetClaim("done") })
	configDir := t.TempDir()
	yaml := "name: p\ntasks:\n  - {id: plain, goal: Say hi, check_shell: \"true\"}\n  - {id: rev, goal: Review it, persona: reviewer, check_shell: \"true\"}\n"
	code, out, errs := runToEnd(t, fleetCmd(t, m, yaml, t.TempDir(), t.TempDir(), "--config-dir", configDir))
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	rev, plain := m.requests("rev-term"), m.requests("plain-term")
	if len(rev) == 0 || len(plain) == 0 {
		t.Fatalf("requests: rev %d, plain %d", len(rev), len(plain))
	}
	if !strings.Contains(rev[0].System, "## Persona: Reviewer") || rev[0].JSON["temperature"] != 0.1 {
		t.Errorf("the reviewer task's request lacks its persona: temperature %v", rev[0].JSON["temperature"])
	}
	if strings.Contains(plain[0].System, "## Persona:") || plain[0].JSON["temperature"] != nil {
		t.Errorf("the plain task got a persona: temperature %v", plain[0].JSON["temperature"])
	}

	before := len(m.order())
	bad := "name: p\ntasks:\n  - {id: a, goal: A, persona: nobody}\n"
	code, _, errs = runToEnd(t, fleetCmd(t, m, bad, t.TempDir(), t.TempDir(), "--config-dir", configDir))
	if code != cli.ExitUsage || !strings.Contains(errs, `task "a"`) || !strings.Contains(errs, `persona`) || !strings.Contains(errs, `"nobody"`) {
		t.Errorf("unknown persona: exit %d, stderr %q", code, errs)
	}
	if len(m.order()) != before {
		t.Error("a refused fleet reached the model")
	}
}

// A sandboxed goal at network_get reaches the network only through its proxy, which refuses
// this machine's services — until the person opens one with --allow-local-port.
func TestGoalCLIProxyOpensOnlyTheLocalPortsThePersonNames(t *testing.T) {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "dev-server-page")
	}))
	defer site.Close()
	port := fmt.Sprint(localPort(t, site.URL))
	fetch := func(args ...string) string {
		t.Helper()
		srv := llmtest.New(t, llmtest.Script{Replies: []llmtest.Reply{
			toolCall("write_to_terminal", map[string]any{"pane_id": "term-1", "wait_timeout_ms": 15000,
				"text": "curl -s -m 5 " + site.URL + "/; echo; echo fetched-$((1+1))"}),
			toolCall("abort_with_report", map[string]string{"reason": "fetched", "what_was_learned": "what the proxy let through"}),
		}})
		code, out, errs := runGoalCLIOn(t, srv, append([]string{"--goal", "Fetch the dev server", "--check-manual", "--risk", "network_get"}, args...)...)
		if code != 2 {
			t.Fatalf("exit %d\n%s\n%s", code, out, errs)
		}
		return srv.ChatRequests()[1].LastToolResult()
	}
	if got := fetch(); strings.Contains(got, "dev-server-page") || !strings.Contains(got, "outside a confined goal's reach") || !strings.Contains(got, "fetched-2") {
		t.Errorf("a local server without --allow-local-port:\n%s", got)
	}
	if got := fetch("--allow-local-port", port); !strings.Contains(got, "dev-server-page") {
		t.Errorf("a local server opened with --allow-local-port %s:\n%s", port, got)
	}
}

// A sandboxed goal's confined shell has a writable temp dir and caches: mktemp and Go's build
// cache work there (they failed with "Permission denied" on HOME and /tmp), and the goal's
// story says where they go.
func TestGoalCLIConfinedShellHasScratchDirs(t *testing.T) {
	cmd := `t=$(mktemp) && echo tmp-ok > "$t" && c=$(go env GOCACHE) && mkdir -p "$c" && touch "$c/probe" && cat "$t" > done.txt`
	code, out, errs := runGoalCLI(t, llmtest.Script{Replies: []llmtest.Reply{
		toolCall("write_to_terminal", map[string]any{"pane_id": "term-1", "text": cmd, "wait_timeout_ms": 20000}),
		// `go env` may be quiet for longer than write_to_terminal's "output stable" wait: wait
		// for the prompt before claiming, as a careful agent would.
		toolCall("wait_for_output", map[string]any{"pane_id": "term-1", "timeout_ms": 20000}),
		toolCall("claim_complete", map[string]string{"rationale": "done.txt written"}),
	}}, "--goal", "Write done.txt through a temp file", "--check-shell", "grep -q tmp-ok done.txt")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	wantOutput(t, out, "confined by the kernel", "private scratch dir", "TMPDIR, XDG_CACHE_HOME, GOCACHE", "verify    passed")
}

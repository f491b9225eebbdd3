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
	"strings"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/cli"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

// runGoalCLI runs `clusterspace goal run` (the built binary) against a scripted model server.
func runGoalCLI(t *testing.T, script llmtest.Script, args ...string) (int, string, string) {
	t.Helper()
	return runGoalCLIOn(t, llmtest.New(t, script), args...)
}

// runGoalCLIOn is runGoalCLI against a server the test keeps, to look at its requests.
func runGoalCLIOn(t *testing.T, srv *llmtest.Server, args ...string) (int, string, string) {
	t.Helper()
	sandbox := t.TempDir()
	base := []string{"goal", "run", "--base-url", srv.OpenAIURL(), "--model", "scripted", "--sandbox", sandbox,
		"--data-dir", t.TempDir(), "--approve", "deny", "--critic-every", "0"}
	cmd := exec.Command(testBinary(t), append(base, args...)...)
	cmd.Dir = sandbox
	return runToEnd(t, cmd)
}

// runGoalCLIUnconfined is runGoalCLIOn without --sandbox: a goal in its work dir, whose MCP
// calls run as they are decided (a confined goal's are asked every time).
func runGoalCLIUnconfined(t *testing.T, srv *llmtest.Server, args ...string) (int, string, string) {
	t.Helper()
	work := t.TempDir()
	base := []string{"goal", "run", "--base-url", srv.OpenAIURL(), "--model", "scripted",
		"--data-dir", t.TempDir(), "--approve", "deny", "--critic-every", "0"}
	cmd := exec.Command(testBinary(t), append(base, args...)...)
	cmd.Dir = work
	return runToEnd(t, cmd)
}

func toolCall(name string, args any) llmtest.Reply { return llmtest.Calls(llmtest.Call(name, args)) }

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
	var last map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if err := json.Unmarshal(sc.Bytes(), &last); err != nil {
			t.Fatalf("not a JSON line: %q", sc.Text())
		}
	}
	data, _ := last["data"].(map[string]any)
	if last["type"] != "ended" || data["status"] != "aborted" || !strings.Contains(data["report"].(string), "gcc is missing") {
		t.Fatalf("last event %v", last)
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
	deadline := time.Now().Add(10 * time.Second)
	for len(srv.ChatRequests()) < 2 { // the second turn is streaming (and stalls)
		if time.Now().After(deadline) {
			t.Fatal("the second model turn never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
	run.Process.Kill() // SIGKILL: no chance to save anything more
	run.Wait()

	srv.Push(toolCall("write_to_terminal", map[string]string{"pane_id": "term-1", "text": "echo two > two.txt"}),
		toolCall("claim_complete", map[string]string{"rationale": "both files written"}))
	resume := exec.Command(testBinary(t), append([]string{"goal", "resume", goalID, "--json"}, model...)...)
	out, err := resume.CombinedOutput()
	if err != nil {
		t.Fatalf("resume: %v\n%s", err, out)
	}
	// resume prints the goal's whole story from the store: step 1 from before the kill, the
	// interruption found at start-up, then the steps of the resumed run.
	var story []string
	sc = bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		var e struct {
			Type string         `json:"type"`
			Data map[string]any `json:"data"`
		}
		json.Unmarshal(sc.Bytes(), &e)
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
	show, err := exec.Command(testBinary(t), "goal", "show", goalID, "--json", "--data-dir", dataDir).Output()
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Status string
		State  struct{ Steps int }
	}
	json.Unmarshal(show, &g)
	if g.Status != "completed" || g.State.Steps != 3 {
		t.Fatalf("after resume: %s", show)
	}
	for _, f := range []string{"one.txt", "two.txt"} {
		if _, err := os.Stat(filepath.Join(sandbox, f)); err != nil {
			t.Errorf("%s missing: %v", f, err)
		}
	}
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

package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

// runGoalCLI runs `clusterspace goal run` (the built binary) against a scripted model server.
func runGoalCLI(t *testing.T, script llmtest.Script, args ...string) (int, string, string) {
	t.Helper()
	srv := llmtest.New(t, script)
	sandbox := t.TempDir()
	base := []string{"goal", "run", "--base-url", srv.OpenAIURL(), "--model", "scripted", "--sandbox", sandbox,
		"--data-dir", t.TempDir(), "--approve", "deny", "--critic-every", "0"}
	cmd := exec.Command(testBinary(t), append(base, args...)...)
	cmd.Dir = sandbox
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errb.String()
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
	for _, want := range []string{"confined by the kernel", "step 1    ok  write_to_terminal", "verify    passed", "ended     completed"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestGoalCLIFailedAndAbortedExitCodes(t *testing.T) {
	code, out, _ := runGoalCLI(t, llmtest.Script{Replies: []llmtest.Reply{
		toolCall("claim_complete", map[string]string{"rationale": "trust me"}),
	}}, "--goal", "Write done.txt", "--check-shell", "test -s done.txt", "--bounce-budget", "1")
	if code != exitGoalFailed || !strings.Contains(out, "verify    FAILED (1/1): Shell exited 1, wanted 0") {
		t.Fatalf("failed goal: exit %d\n%s", code, out)
	}

	code, out, _ = runGoalCLI(t, llmtest.Script{Replies: []llmtest.Reply{
		toolCall("abort_with_report", map[string]string{"reason": "no compiler installed", "what_was_learned": "gcc is missing"}),
	}}, "--goal", "Build it", "--check-manual", "--json")
	if code != exitGoalAborted {
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
	}
	for want, args := range cases {
		code, _, errs := runGoalCLI(t, llmtest.Script{}, args...)
		if code != exitUsage || !strings.Contains(errs, want) {
			t.Errorf("%v: exit %d, stderr %q (want 64 and %q)", args, code, errs, want)
		}
	}
	// The sandbox dir must exist.
	code, _, errs := runGoalCLI(t, llmtest.Script{}, "--goal", "x", "--check-manual", "--sandbox", filepath.Join(os.TempDir(), "no-such-sandbox-dir"))
	if code != exitUsage || !strings.Contains(errs, "sandboxDir") {
		t.Errorf("missing sandbox: exit %d %q", code, errs)
	}
}

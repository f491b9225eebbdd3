package agent

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/terminal"
	"github.com/clusterspace/clusterspace/backend/tools"
)

// The guard over the real terminal tools on a real bash pane, as the agent feeds it (calls.go:
// masked result text, Mutates from the call's risk): the same command with the same output is
// a repeat however far the screen has scrolled; new output, and waits on a command that keeps
// printing, are not.
func TestGuardRepeatInARealTerminal(t *testing.T) {
	if _, err := os.Stat("/bin/bash"); err != nil {
		t.Fatalf("no /bin/bash to run the terminal tools on (%v): install bash", err)
	}
	t.Parallel()
	m := terminal.NewManager(terminal.Options{})
	t.Cleanup(m.Shutdown)
	r := tools.NewRegistry()
	tools.RegisterTerminal(r, m)
	home := t.TempDir() // no rc files: the user's shell set-up must not decide the test
	const pane = "term-1"
	if _, err := m.Open(context.Background(), terminal.Spec{PaneID: pane, Shell: "/bin/bash", Dir: home, Env: []string{"HOME=" + home}}); err != nil {
		t.Fatal(err)
	}
	if c, err := m.WaitForCompletion(context.Background(), pane, "", terminal.WaitOptions{Since: -1, Prompt: true, Timeout: 10 * time.Second}); err != nil || c.Reason != terminal.CompletedPrompt {
		t.Fatalf("no first prompt: %+v %v", c, err)
	}

	g := NewGuard()
	// step asks the guard, runs the call if it is allowed, and tells the guard the result.
	step := func(name string, args map[string]any) GuardDecision {
		t.Helper()
		tool, _ := r.Get(name)
		raw, _ := json.Marshal(args)
		risk, _ := tools.RiskOf(tool, raw)
		call := GuardCall{Tool: name, Args: raw, Mutates: risk > tools.ReadOnly}
		if d := g.Before(call); d.Action != GuardAllow {
			return d
		}
		res, err := tool.Run(context.Background(), tools.Call{Name: name, Args: raw})
		if err != nil {
			t.Fatalf("%s %s: %v", name, raw, err)
		}
		g.After(call, res.Text, res.IsError)
		return GuardDecision{Action: GuardAllow}
	}
	write := func(text string, waitMS int) map[string]any {
		return map[string]any{"pane_id": pane, "text": text, "wait_timeout_ms": waitMS}
	}

	// One command, a new number each time: news, however often it is typed.
	for i := range repeatLimit + 1 {
		if d := step("write_to_terminal", write("echo $((n+=1))", 3000)); d.Action != GuardAllow {
			t.Fatalf("echo $((n+=1)) call %d: %+v", i+1, d)
		}
	}
	// One command, one output: the screen scrolls, the call repeats.
	for i := range repeatLimit {
		if d := step("write_to_terminal", write("echo a", 3000)); d.Action != GuardAllow {
			t.Fatalf("echo a call %d: %+v", i+1, d)
		}
	}
	if d := step("write_to_terminal", write("echo a", 3000)); d.Action != GuardBlock || d.Rule != "repeat" {
		t.Fatalf("echo a typed %d times with the same output, then again: %+v", repeatLimit, d)
	}
	// Waiting on a command that prints a step every 0.3 s: each wait shows new lines.
	if d := step("write_to_terminal", write("for i in $(seq 10); do echo step $i; sleep 0.3; done", 100)); d.Action != GuardAllow {
		t.Fatalf("starting the loop: %+v", d)
	}
	for i := range repeatLimit + 1 {
		if d := step("wait_for_output", map[string]any{"pane_id": pane, "timeout_ms": 700}); d.Action != GuardAllow {
			t.Fatalf("wait %d on a command that keeps printing: %+v", i+1, d)
		}
	}
}

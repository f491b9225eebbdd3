package goal_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

// Each loop-guard trigger through the goal runner: the guard's event is on the rail, and its
// words reach the model in a later request. Every scenario then finishes the goal properly
// (write, read back, claim), so a trigger never ends a goal that can still be done.
func TestGoalGuardTriggers(t *testing.T) {
	t.Parallel()
	read := func(path string) llmtest.Reply { return call("read_file", map[string]string{"path": path}) }
	times := func(n int, r func(i int) llmtest.Reply) []llmtest.Reply {
		var out []llmtest.Reply
		for i := range n {
			out = append(out, r(i))
		}
		return out
	}
	finish := []llmtest.Reply{writeDone(), read("done.txt"), claim("done.txt is written and reads ok")}
	cases := []struct {
		name   string
		files  map[string]string // made in the sandbox first
		script []llmtest.Reply
		rule   string
		said   string // a piece of the message the model must read
	}{
		{"repeat", map[string]string{"a.txt": "same"}, times(4, func(int) llmtest.Reply { return read("a.txt") }),
			"repeat", "you made this exact call 3 times"},
		{"alternation", map[string]string{"a.txt": "A", "b.txt": "B"},
			[]llmtest.Reply{read("a.txt"), read("b.txt"), read("a.txt"), read("b.txt"), read("a.txt")},
			"alternation", "repeat a cycle of 2 calls"},
		{"error streak", nil, times(3, func(int) llmtest.Reply { return call("run_check", map[string]any{}) }),
			"error_streak", "failed 3 times in a row with the same error"},
		{"same result", map[string]string{"c0": "x", "c1": "x", "c2": "x", "c3": "x"},
			times(4, func(i int) llmtest.Reply { return read(fmt.Sprintf("c%d", i)) }),
			"same_result", "all returned the same result"},
		{"no progress", noProgressFiles(), times(13, func(i int) llmtest.Reply { return read(fmt.Sprintf("p%d", i)) }),
			"no_progress", "10 steps without new output"},
		{"narrative", nil, []llmtest.Reply{llmtest.Text("I ran the tests and all tests pass.")},
			"narrative", "no tool call did that since your last turn"},
		// The next two claim too early, so the criterion refuses and the model reads the nudge
		// with the refusal (a claim that verifies ends the goal: the nudge had nothing to add).
		{"verify before claim", nil, []llmtest.Reply{call("write_file", map[string]string{"path": "notes.txt", "content": "x"}), claim("done")},
			"verify_before_claim", "without reading or checking anything after your last change"},
		{"open todos", map[string]string{"a.txt": "x"}, []llmtest.Reply{
			call("write_todos", map[string]any{"items": []string{"write done.txt", "tell the team"}}), read("a.txt"), claim("done")},
			"open_todos", "2 checklist item(s) still open"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			script := append(append([]llmtest.Reply(nil), c.script...), finish...)
			r := newRig(t, llmtest.Script{Replies: script})
			for name, content := range c.files {
				if err := os.WriteFile(filepath.Join(r.sandbox, name), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			g, evs := r.run(r.spec())
			var rules []string
			found := false
			for _, e := range findEvents(evs, goal.EventGuard) {
				rules = append(rules, fmt.Sprint(e["rule"]))
				found = found || e["rule"] == c.rule
			}
			if !found {
				t.Fatalf("no %s guard event; guard rules seen: %v (goal %s)", c.rule, rules, g.Status)
			}
			if !r.sawInRequest(c.said) {
				t.Fatalf("the model never read %q", c.said)
			}
			if g.Status != goal.StatusCompleted {
				t.Fatalf("the goal ended %s: %s", g.Status, g.Report)
			}
		})
	}
}

// noProgressFiles are thirteen files whose contents cycle through three texts: every read is
// a new call, and after the first three none says anything new.
func noProgressFiles() map[string]string {
	files := map[string]string{}
	for i := range 13 {
		files[fmt.Sprintf("p%d", i)] = []string{"A", "B", "C"}[i%3]
	}
	return files
}

package agent

import (
	"encoding/json"
	"fmt"
	"testing"
)

// gstep is one step of a guard scenario: a tool call that runs (Before, then After with its
// result), or, with said set, a model turn's words.
type gstep struct {
	tool, args, result string
	err, mutates       bool
	todos              []string
	said               string
	callsNow           int
}

func run(tool, args, result string) gstep { return gstep{tool: tool, args: args, result: result} }
func change(tool, args, result string) gstep {
	return gstep{tool: tool, args: args, result: result, mutates: true}
}

// typed is write_to_terminal's result for `echo a`, differing only by where the cursor is
// and how long completion took: the volatile details that once hid every repeat.
func typed(cursor, ms int) string {
	return fmt.Sprintf("Sent 6 characters + Enter to term-1.\nCompletion: prompt after %d ms\nCursor: %d\n--- last 3 lines ---\n$ echo a\na\n$", ms, cursor)
}

func repeatN(n int, f func(i int) gstep) []gstep {
	var out []gstep
	for i := range n {
		out = append(out, f(i))
	}
	return out
}

// One table per trigger: every step but the last runs; the last is judged (a call by Before,
// and by After if Before allows it; words by Said).
func TestGuardTriggers(t *testing.T) {
	t.Parallel()
	echo := `{"pane_id":"term-1","text":"echo a"}`
	cases := []struct {
		name   string
		steps  []gstep
		action GuardAction
		rule   string
	}{
		{"repeat: the same call, results differing only by cursor and timing",
			repeatN(4, func(i int) gstep { return change("write_to_terminal", echo, typed(100+20*i, 10+i)) }), GuardBlock, "repeat"},
		{"repeat: a result that really changes is news",
			repeatN(4, func(i int) gstep {
				return run("read_terminal_output", `{"pane_id":"p"}`, fmt.Sprintf("build %d%%", 20*i))
			}), GuardAllow, ""},
		{"same call: typing one command over and over, the screen changing each time",
			repeatN(6, func(i int) gstep {
				return change("write_to_terminal", `{"pane_id":"p","text":"make"}`, fmt.Sprintf("make: run %d", i))
			}), GuardBlock, "same_call"},
		{"same call: polling a read is not a loop while its output moves",
			repeatN(8, func(i int) gstep {
				return run("poll_terminal_status", `{"pane_id":"p"}`, fmt.Sprintf("busy, %d files", i))
			}), GuardAllow, ""},
		{"same result: different calls, one answer",
			repeatN(4, func(i int) gstep {
				return run("read_terminal_output", fmt.Sprintf(`{"pane_id":"p%d"}`, i), "no pane with that id")
			}), GuardNudge, "same_result"},
		{"same result: three is not yet a streak",
			repeatN(3, func(i int) gstep {
				return run("read_terminal_output", fmt.Sprintf(`{"pane_id":"p%d"}`, i), "no pane with that id")
			}), GuardAllow, ""},
		{"no progress: ten steps of output already seen",
			repeatN(13, func(i int) gstep {
				return run("read_file", fmt.Sprintf(`{"path":"f%d"}`, i), []string{"A", "B", "C"}[i%3])
			}), GuardNudge, "no_progress"},
		{"no progress: a checklist item done is progress",
			append(repeatN(8, func(i int) gstep {
				return run("read_file", fmt.Sprintf(`{"path":"f%d"}`, i), []string{"A", "B", "C"}[i%3])
			}),
				append([]gstep{run("complete_todo", `{"index":0}`, "Item 0 done.")},
					repeatN(4, func(i int) gstep {
						return run("read_file", fmt.Sprintf(`{"path":"g%d"}`, i), []string{"A", "B", "C"}[i%3])
					})...)...),
			GuardAllow, ""},
		{"narrative: says it ran the tests, no tool since its last turn",
			[]gstep{run("read_file", `{"path":"a"}`, "x"), {said: "Looking."}, {said: "I ran the tests and all tests pass."}}, GuardNudge, "narrative"},
		{"narrative: the tests did run since the last turn",
			[]gstep{{said: "Running them."}, change("write_to_terminal", `{"text":"go test"}`, "ok"), {said: "I ran the tests: they pass."}}, GuardAllow, ""},
		{"narrative: running them now, in this very turn",
			[]gstep{{said: "x"}, {said: "I ran the tests earlier; running again.", callsNow: 1}}, GuardAllow, ""},
		{"narrative: a plan is not a claim",
			[]gstep{{said: "x"}, {said: "Next I will run the tests and check the page."}}, GuardAllow, ""},
		{"verify before claim: a write, then a claim",
			[]gstep{change("write_file", `{"path":"a"}`, "wrote a"), run("claim_complete", `{"rationale":"done"}`, "Claim received.")}, GuardNudge, "verify_before_claim"},
		{"verify before claim: a write, a read, then a claim",
			[]gstep{change("write_file", `{"path":"a"}`, "wrote a"), run("read_file", `{"path":"a"}`, "x"), run("claim_complete", `{"rationale":"done"}`, "ok")}, GuardAllow, ""},
		{"verify before claim: said once per change",
			[]gstep{change("write_file", `{"path":"a"}`, "wrote a"), run("claim_complete", `{"rationale":"done"}`, "ok"), run("claim_complete", `{"rationale":"really"}`, "ok")}, GuardAllow, ""},
		{"open todos at claim",
			[]gstep{run("read_file", `{"path":"a"}`, "x"), {tool: "claim_complete", args: `{"rationale":"done"}`, result: "ok", todos: []string{"write the docs"}}}, GuardNudge, "open_todos"},
		{"open todos: none open",
			[]gstep{run("read_file", `{"path":"a"}`, "x"), {tool: "claim_complete", args: `{"rationale":"done"}`, result: "ok"}}, GuardAllow, ""},
		{"error streak: the same error three times disables the tool",
			repeatN(3, func(i int) gstep {
				return gstep{tool: "build", args: fmt.Sprintf(`{"try":%d}`, i), result: "compiler exploded", err: true}
			}), GuardDisable, "error_streak"},
		{"alternation: A/B/A/B with the same results",
			[]gstep{run("a", `{}`, "1"), run("b", `{}`, "2"), run("a", `{}`, "1"), run("b", `{}`, "2"), run("a", `{}`, "1")}, GuardBlock, "alternation"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := NewGuard()
			var d GuardDecision
			for i, s := range c.steps {
				last := i == len(c.steps)-1
				if s.said != "" {
					d = g.Said(s.said, s.callsNow)
					continue
				}
				call := GuardCall{Tool: s.tool, Args: json.RawMessage(s.args), Mutates: s.mutates, OpenTodos: s.todos}
				d = g.Before(call)
				if d.Action == GuardBlock || d.Action == GuardHalt {
					if !last {
						t.Fatalf("step %d (%s) blocked early: %+v", i, s.tool, d)
					}
					break
				}
				before := d
				d = g.After(call, s.result, s.err)
				if !last && d.Action != GuardAllow {
					t.Fatalf("step %d (%s) triggered early: %+v", i, s.tool, d)
				}
				if before.Action == GuardNudge && d.Action == GuardAllow {
					d = before // a nudge before the call stands unless the call earned another
				}
			}
			if d.Action != c.action || d.Rule != c.rule {
				t.Fatalf("got %s/%s (%s), want %s/%s", d.Action, d.Rule, d.Message, c.action, c.rule)
			}
		})
	}
}

// Thresholds are settings: a goal that polls on purpose can allow more repeats.
func TestGuardSettings(t *testing.T) {
	t.Parallel()
	g := NewGuardWith(GuardSettings{RepeatLimit: 6})
	args := json.RawMessage(`{"path":"a"}`)
	for i := range 6 {
		if d := g.Before(GuardCall{Tool: "read", Args: args}); d.Action != GuardAllow {
			t.Fatalf("call %d blocked with a repeat limit of 6: %+v", i+1, d)
		}
		g.After(GuardCall{Tool: "read", Args: args}, "same", false)
	}
	if d := g.Before(GuardCall{Tool: "read", Args: args}); d.Rule != "repeat" {
		t.Fatalf("the seventh identical call: %+v", d)
	}
	if err := (GuardSettings{MaxBlocks: -1}).Validate(); err == nil {
		t.Fatal("a negative threshold was accepted")
	}
}

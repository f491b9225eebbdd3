package agent

import (
	"encoding/json"
	"fmt"
	"testing"
)

type step struct {
	tool, args, result string
	err                bool
}

func records(steps ...step) []GuardRecord {
	var h []GuardRecord
	for _, s := range steps {
		h = append(h, NewGuardRecord(s.tool, json.RawMessage(s.args), s.result, s.err))
	}
	return h
}

func TestRepeatedCall(t *testing.T) {
	t.Parallel()
	same := step{"read", `{"path":"a"}`, "x", false}
	cases := []struct {
		name    string
		history []GuardRecord
		next    string
		want    bool
	}{
		{"twice is fine", records(same, same), `{"path":"a"}`, false},
		{"three identical", records(same, same, same), `{"path":"a"}`, true},
		{"key order does not hide it", records(same, same, same), `{ "path" : "a" }`, true},
		{"interleaved still counts", records(same, step{"ls", `{}`, "1", false}, same, same), `{"path":"a"}`, true},
		{"result changed: progress", records(same, same, step{"read", `{"path":"a"}`, "y", false}), `{"path":"a"}`, false},
		{"polling a build that changes", records(step{"poll", `{}`, "10%", false}, step{"poll", `{}`, "40%", false}, step{"poll", `{}`, "80%", false}), `{}`, false},
		{"other args", records(same, same, same), `{"path":"b"}`, false},
	}
	for _, c := range cases {
		tool := "read"
		if c.name == "polling a build that changes" {
			tool = "poll"
		}
		if got := repeatedCall(c.history, tool, canonicalJSON(json.RawMessage(c.next)), repeatLimit); got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

func TestAlternation(t *testing.T) {
	t.Parallel()
	a := step{"a", `{}`, "1", false}
	b := step{"b", `{}`, "2", false}
	c := step{"c", `{}`, "3", false}
	cases := []struct {
		name    string
		history []GuardRecord
		next    string
		want    int
	}{
		{"A/B twice, A next", records(a, b, a, b), "a", 2},
		{"A/B twice, C next", records(a, b, a, b), "c", 0},
		{"A/B/C twice, A next", records(a, b, c, a, b, c), "a", 3},
		{"A/B once", records(a, b), "a", 0},
		{"A/B with B's result changing", records(a, b, a, step{"b", `{}`, "changed", false}), "a", 0},
		{"A/A/A/A is a repeat, not an alternation", records(a, a, a, a), "a", 0},
	}
	for _, c := range cases {
		if got := alternation(c.history, c.next, "{}"); got != c.want {
			t.Errorf("%s: period %d, want %d", c.name, got, c.want)
		}
	}
}

func TestErrorStreak(t *testing.T) {
	t.Parallel()
	e := step{"run", `{"cmd":"make"}`, "make: *** No rule", true}
	cases := []struct {
		name    string
		history []GuardRecord
		want    bool
	}{
		{"three same errors", records(e, e, e), true},
		{"same error, other args", records(e, step{"run", `{"cmd":"make all"}`, "make: *** No rule", true}, e), true},
		{"two", records(e, e), false},
		{"a success between", records(e, step{"run", `{}`, "ok", false}, e, e), false},
		{"different errors", records(e, e, step{"run", `{}`, "other", true}), false},
	}
	for _, c := range cases {
		if got := errorStreak(c.history, errorStreakLimit); got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

func TestGuardBlocksDisablesAndHalts(t *testing.T) {
	t.Parallel()
	g := NewGuard()
	args := json.RawMessage(`{"path":"x"}`)
	for range 3 {
		if d := g.Before(GuardCall{Tool: "read", Args: args}); d.Action != GuardAllow {
			t.Fatalf("blocked too early: %+v", d)
		}
		g.After(GuardCall{Tool: "read", Args: args}, "same", false)
	}
	d := g.Before(GuardCall{Tool: "read", Args: args})
	if d.Action != GuardBlock || d.Rule != "repeat" {
		t.Fatalf("fourth identical call: %+v", d)
	}
	// An error streak disables the tool for a while, then it is allowed again.
	for i := range 3 {
		g.Before(GuardCall{Tool: "build", Args: nil})
		d = g.After(GuardCall{Tool: "build", Args: json.RawMessage(fmt.Sprintf(`{"try":%d}`, i))}, "compiler exploded", true)
	}
	if d.Action != GuardDisable {
		t.Fatalf("after 3 identical errors: %+v", d)
	}
	if d := g.Before(GuardCall{Tool: "build", Args: nil}); d.Action != GuardBlock || d.Rule != "disabled" {
		t.Fatalf("disabled tool ran: %+v", d)
	}
	for i := range disableForSteps {
		g.After(GuardCall{Tool: "other", Args: json.RawMessage(fmt.Sprintf(`{"i":%d}`, i))}, fmt.Sprint(i), false)
	}
	if d := g.Before(GuardCall{Tool: "build", Args: nil}); d.Action != GuardAllow {
		t.Fatalf("tool still disabled after %d steps: %+v", disableForSteps, d)
	}
	// Keep repeating a blocked call: the fifth block halts.
	for g.Blocks() < maxGuardBlocks-1 {
		if d := g.Before(GuardCall{Tool: "read", Args: args}); d.Action != GuardBlock {
			t.Fatalf("block %d: %+v", g.Blocks(), d)
		}
	}
	if d := g.Before(GuardCall{Tool: "read", Args: args}); d.Action != GuardHalt {
		t.Fatalf("fifth block: %+v", d)
	}
}

// Healthy work — results changing each time — must never trip the guard.
func TestGuardIgnoresHealthyProgress(t *testing.T) {
	t.Parallel()
	g := NewGuard()
	for i := range 60 {
		tool := []string{"write_to_terminal", "read_terminal_output", "poll_terminal_status"}[i%3]
		args := json.RawMessage(`{"pane_id":"p"}`)
		if d := g.Before(GuardCall{Tool: tool, Args: args}); d.Action != GuardAllow {
			t.Fatalf("step %d: %+v", i, d)
		}
		g.After(GuardCall{Tool: tool, Args: args}, fmt.Sprintf("output %d", i), false)
	}
}

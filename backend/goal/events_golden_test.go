package goal_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// volatile keys change from run to run (ids, clocks); the golden files keep only their names.
var volatile = map[string]bool{"id": true, "goalId": true, "callId": true, "createdAt": true, "answeredAt": true,
	"durationMs": true, "workspaceId": true, "seq": true, "at": true, "turn": true, "costUsd": true, "tokens": true}

// normalized is one event per line as canonical JSON, volatile values blanked.
func normalized(t *testing.T, events []any) []byte {
	t.Helper()
	var out bytes.Buffer
	for _, e := range events {
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		json.Unmarshal(b, &v)
		b, _ = json.Marshal(blank(v)) // maps marshal with sorted keys
		out.Write(b)
		out.WriteByte('\n')
	}
	return out.Bytes()
}

func blank(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if volatile[k] {
				x[k] = "…"
			} else {
				x[k] = blank(val)
			}
		}
	case []any:
		for i := range x {
			x[i] = blank(x[i])
		}
	}
	return v
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("events differ from %s (run with -update if the change is meant):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// A goal's story — steps, an approval, the guard, a failed and a passed verification, the
// critic — is the same event for event as it was before the goal ran on the shared turn
// engine. The golden file was written by the goal runner before the move.
func TestGoalEventsGolden(t *testing.T) {
	t.Parallel()
	check := call("run_check", map[string]any{})
	r := newRig(t, llmtest.Script{
		Replies: []llmtest.Reply{
			call("read_file", map[string]string{"path": "missing.txt"}),
			call("http_post", map[string]string{"url": "https://example.invalid/hook"}),
			check, check, check, check,
			claim("done, I think"),
			writeDone(),
			claim("done.txt exists"),
		},
		Roles: []llmtest.Role{criticSays("PROGRESSING\nIt is getting there.")},
	}, autoApprove(agent.ApprovalDeny, "not from this goal"))
	g, evs := r.run(r.spec(func(s *goal.Spec) { s.Settings.CriticInterval = intp(3) }))
	if g.Status != goal.StatusCompleted {
		t.Fatalf("status %s: %s", g.Status, g.Report)
	}
	var events []any
	for _, e := range evs {
		events = append(events, map[string]any{"type": e.Type, "data": e.Data})
	}
	// The sandbox is a new temporary directory each run.
	golden(t, "goal-events.golden", bytes.ReplaceAll(normalized(t, events), []byte(r.sandbox), []byte("<sandbox>")))
}

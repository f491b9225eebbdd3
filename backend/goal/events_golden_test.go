package goal_test

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/agent/agenttest"
	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

// A goal's story — steps, an approval, the guard, a failed and a passed verification, the
// critic — is the same event for event as it was before the goal ran on the shared turn
// engine. The golden file was written by the goal runner before the move. (The agent
// checks its work before claiming, so the guard's later verify-before-claim nudge stays out
// of this story.)
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
			call("read_file", map[string]string{"path": "done.txt"}),
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
	// Ids and clocks change from run to run, and the sandbox is a new temporary directory.
	// Token counts follow the prompts' wording; the cost tests check them.
	got := agenttest.Lines(t, events, "id", "goalId", "callId", "createdAt", "answeredAt", "durationMs", "usage")
	agenttest.Golden(t, filepath.Join("testdata", "goal-events.golden"), bytes.ReplaceAll(got, []byte(r.sandbox), []byte("<sandbox>")))
}

package goal_test

import (
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
	"github.com/clusterspace/clusterspace/backend/tools"
)

// How claims that come with other calls are taken. These are decisions, kept here:
//   - a claim is verified after every call of its reply has run, so it is judged on the
//     state the whole reply left (a claim listed before the write that makes it true passes);
//   - a claim and an abort in one reply end the goal as aborted with the agent's report,
//     unverified: an agent that says it cannot finish is not completed on a guess;
//   - a claim without a rationale is refused as a mistake, costs no bounce, and the goal goes on.
func TestClaimsThatComeWithOtherCalls(t *testing.T) {
	t.Parallel()
	write := llmtest.Call("write_file", map[string]string{"path": "done.txt", "content": "ok"})
	claimCall := func(why string) llmtest.ToolCall {
		return llmtest.Call(tools.ToolClaimComplete, map[string]string{"rationale": why})
	}

	t.Run("claim before the write, in one reply", func(t *testing.T) {
		t.Parallel()
		r := newRig(t, llmtest.Script{Replies: []llmtest.Reply{llmtest.Calls(claimCall("done.txt is written"), write)}})
		g, evs := r.run(r.spec())
		if g.Status != goal.StatusCompleted || len(findEvents(evs, goal.EventVerificationPassed)) != 1 || g.State.Bounces != 0 {
			t.Fatalf("%s after %d bounces: %s", g.Status, g.State.Bounces, g.Report)
		}
	})

	t.Run("claim and abort together", func(t *testing.T) {
		t.Parallel()
		r := newRig(t, llmtest.Script{Replies: []llmtest.Reply{llmtest.Calls(write, claimCall("done"),
			llmtest.Call(tools.ToolAbortWithReport, map[string]string{"reason": "not sure it worked", "what_was_learned": "the check is flaky"}))}})
		g, evs := r.run(r.spec())
		if g.Status != goal.StatusAborted || !strings.Contains(g.Report, "not sure it worked") {
			t.Fatalf("%s: %q", g.Status, g.Report)
		}
		if n := len(findEvents(evs, goal.EventVerificationPassed)) + len(findEvents(evs, goal.EventVerificationFailed)); n != 0 {
			t.Fatalf("%d verifications ran for a goal the agent aborted", n)
		}
	})

	t.Run("claim without a rationale", func(t *testing.T) {
		t.Parallel()
		r := newRig(t, llmtest.Script{Replies: []llmtest.Reply{writeDone(), claim("   "), claim("done.txt is written")}})
		g, evs := r.run(r.spec())
		if g.Status != goal.StatusCompleted || g.State.Bounces != 0 || len(findEvents(evs, goal.EventVerificationFailed)) != 0 {
			t.Fatalf("%s after %d bounces", g.Status, g.State.Bounces)
		}
		if !r.sawInRequest("claim_complete needs a rationale") {
			t.Fatal("the model was not told why its empty claim was refused")
		}
	})
}

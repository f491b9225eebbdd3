package store

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/llm"
)

// runningGoal is a goal that has just started.
func runningGoal(id string) goal.Goal {
	return goal.Goal{ID: id, Status: goal.StatusRunning, CreatedAt: time.Now(), UpdatedAt: time.Now()}
}

// saveTestGoal stores a running goal.
func saveTestGoal(t *testing.T, s *Store, id string) goal.Goal {
	t.Helper()
	g := runningGoal(id)
	if err := s.CommitGoal(context.Background(), &goal.Commit{Goal: &g}); err != nil {
		t.Fatal(err)
	}
	return g
}

func TestGoalStepsKeepFirstFiftyAndLastFourHundredFifty(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t)
	ctx := context.Background()
	g := saveTestGoal(t, s, "goal-1")
	for i := 1; i <= 700; i++ {
		st := goal.Step{Index: i, CallID: "c", Tool: "t", Args: json.RawMessage(`{}`), StartedAt: time.Now()}
		if err := s.CommitGoal(ctx, &goal.Commit{ID: g.ID, Steps: []goal.Step{st}}); err != nil {
			t.Fatal(err)
		}
	}
	steps, err := s.GoalSteps(ctx, g.ID, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 500 || steps[0].Index != 1 || steps[49].Index != 50 || steps[50].Index != 251 || steps[499].Index != 700 {
		t.Fatalf("%d steps kept: first %d, 50th %d, 51st %d, last %d", len(steps), steps[0].Index, steps[49].Index, steps[50].Index, steps[len(steps)-1].Index)
	}
}

// Approvals belong to a goal or to a workspace's chat (exactly one); each goes with its owner.
func TestApprovalsOfGoalsAndChats(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t)
	ctx := context.Background()
	g := saveTestGoal(t, s, "goal-1")
	saveTestWorkspace(t, s, "ws-1")
	now := time.Now().UTC().Truncate(time.Millisecond)
	req := func(id, goalID, wsID string) agent.Approval {
		return agent.Approval{ID: id, GoalID: goalID, WorkspaceID: wsID, CallID: "c", Tool: "http_post", Args: json.RawMessage(`{"url":"u"}`),
			Risk: "network_write", Reason: "above", Status: agent.ApprovalPending, CreatedAt: now}
	}
	for _, a := range []agent.Approval{req("a-goal", g.ID, ""), req("a-chat", "", "ws-1")} {
		if err := s.SaveApproval(ctx, a); err != nil {
			t.Fatalf("save %s: %v", a.ID, err)
		}
	}
	for _, bad := range []agent.Approval{req("a-none", "", ""), req("a-both", g.ID, "ws-1")} {
		if err := s.SaveApproval(ctx, bad); err == nil {
			t.Errorf("%s was stored: an approval must belong to one goal or one chat", bad.ID)
		}
	}
	pending, err := s.Approvals(ctx, true)
	if err != nil || len(pending) != 2 || pending[0].GoalID+pending[1].GoalID != g.ID || pending[0].WorkspaceID+pending[1].WorkspaceID != "ws-1" {
		t.Fatalf("pending %+v, %v", pending, err)
	}
	answered := pending[1]
	answered.Status, answered.AnswerReason, answered.AnsweredAt = agent.ApprovalDeny, "no", &now
	if err := s.SaveApproval(ctx, answered); err != nil {
		t.Fatal(err)
	}
	if pending, _ := s.Approvals(ctx, true); len(pending) != 1 || pending[0].ID == answered.ID {
		t.Fatalf("after answering %s: %+v", answered.ID, pending)
	}
	if err := s.DeleteWorkspace(ctx, "ws-1"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteGoal(ctx, g.ID); err != nil {
		t.Fatal(err)
	}
	if all, _ := s.Approvals(ctx, false); len(all) != 0 {
		t.Fatalf("approvals outlived their goal and workspace: %+v", all)
	}
}

// stepCommit is what a runner commits for one step: the goal row, a message, the step and
// its event.
func stepCommit(g goal.Goal, i int) *goal.Commit {
	return &goal.Commit{Goal: &g, Messages: []llm.Message{llm.UserText(fmt.Sprint("step ", i))}, MessagesFrom: i,
		Steps:  []goal.Step{{Index: i, CallID: fmt.Sprint("c", i), Tool: "t", Args: json.RawMessage(`{}`), StartedAt: time.Now()}},
		Events: []goal.Event{{Type: goal.EventStep, Data: json.RawMessage(`{}`)}}}
}

// A goal commits several times a step; preparing its statements each time was half the
// runner's overhead per step, so each is prepared once and reused from then on.
func TestCommitGoalReusesItsStatements(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t)
	ctx := context.Background()
	g := runningGoal("goal-1")
	if err := s.CommitGoal(ctx, stepCommit(g, 1)); err != nil {
		t.Fatal(err)
	}
	first := s.commits.prepared
	if first == 0 {
		t.Fatal("a goal commit prepared no statement: it prepares its queries anew on every call")
	}
	for i := 2; i <= 50; i++ {
		if err := s.CommitGoal(ctx, stepCommit(g, i)); err != nil {
			t.Fatal(err)
		}
		if i == 25 {
			// A commit that fails (no such goal) is rolled back whole; the next ones go on.
			bad := stepCommit(goal.Goal{ID: "no-such-goal"}, 1)
			bad.Goal = nil
			if err := s.CommitGoal(ctx, bad); err == nil {
				t.Fatal("a step of a goal that does not exist was committed")
			}
		}
	}
	if s.commits.prepared != first {
		t.Fatalf("50 step commits prepared %d statements, the first alone %d: each should be prepared once", s.commits.prepared, first)
	}
	events, err := s.GoalEvents(ctx, g.ID, 0)
	if err != nil || len(events) != 50 || events[49].Seq != 50 {
		t.Fatalf("events %d (%v): the reused statements must still number events 1…50", len(events), err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.CommitGoal(ctx, stepCommit(g, 51)); err == nil {
		t.Fatal("a closed store committed")
	}
}

// Goals commit from their own goroutines at once: each commit is whole, and the events of
// each goal are numbered 1, 2, 3… without gaps.
func TestConcurrentGoalCommits(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	for k := range 4 {
		g := runningGoal(fmt.Sprint("goal-", k))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 1; i <= 30; i++ {
				if err := s.CommitGoal(ctx, stepCommit(g, i)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	for k := range 4 {
		events, err := s.GoalEvents(ctx, fmt.Sprint("goal-", k), 0)
		if err != nil || len(events) != 30 || events[0].Seq != 1 || events[29].Seq != 30 {
			t.Fatalf("goal %d: %d events (%v)", k, len(events), err)
		}
	}
}

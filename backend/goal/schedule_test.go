package goal_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/goal/criterion"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

// holdLong in a goal's text makes paneScript hold it for a minute.
const holdLong = "HOLD-LONG"

// paneScript answers every goal alike: a sleep on its first turn (200 ms, a minute for a
// goal saying holdLong), then a claim.
func paneScript() llmtest.Script {
	return llmtest.Script{Replies: []llmtest.Reply{{Repeat: 1 << 30, Compute: func(req llmtest.Request) llmtest.Reply {
		msgs, _ := req.JSON["messages"].([]any)
		for _, x := range msgs {
			if mm, _ := x.(map[string]any); mm["role"] == "assistant" {
				return claim("done")
			}
		}
		ms := 200
		if strings.Contains(string(req.Body), holdLong) {
			ms = 60_000
		}
		return call("sleep", map[string]int{"ms": ms})
	}}}}
}

func trueCheck(s *goal.Spec) { s.Criterion = criterion.Spec{Kind: "shell", Command: "true"} }

// A group's goals start only once its owner opened it, one at a time under a limit of 1,
// the highest priority first; each launches with the owner's briefing in its first prompt,
// and the owner is told of each launch.
func TestGroupQueuesByPriorityUnderItsLimit(t *testing.T) {
	t.Parallel()
	r := newRig(t, paneScript(), func(o *goal.Options) { o.MaxConcurrent = 3 })
	in := func(pane string, prio int) func(*goal.Spec) {
		return func(s *goal.Spec) { s.PaneID, s.Priority, s.Group, s.GroupLimit = pane, prio, "fleet-x", 1 }
	}
	_, err := r.svc.Start(context.Background(), r.spec(trueCheck, in("pa", 0)))
	var fe *goal.FieldError
	if !errors.As(err, &fe) || fe.Field != "group" {
		t.Fatalf("a goal of a group nobody opened: %v", err)
	}
	var mu sync.Mutex
	var launched []string
	r.svc.OpenGroup("fleet-x", goal.GroupOwner{
		Briefing: func(ctx context.Context, g goal.Goal) string { return "BRIEFING-FOR-" + g.Spec.PaneID },
		Launched: func(g goal.Goal) {
			mu.Lock()
			launched = append(launched, g.Spec.PaneID)
			mu.Unlock()
		},
	})
	var ids []string
	for _, e := range []func(*goal.Spec){in("pa", 0), in("pb", 0), in("pc", 3)} {
		g := r.mustStart(r.spec(trueCheck, e))
		ids = append(ids, g.ID)
	}
	if q := r.svc.Queue(); !slices.Equal(q, []string{ids[2], ids[1]}) && !slices.Equal(q, []string{ids[0], ids[2], ids[1]}) {
		t.Errorf("queue %v, want c before b (a may still be being briefed): %v", q, ids)
	}
	var gs []goal.Goal
	for _, id := range ids {
		g, _ := r.wait(id)
		if g.Status != goal.StatusCompleted {
			t.Fatalf("goal in %s: %s %s", g.Spec.PaneID, g.Status, g.Report)
		}
		if !strings.Contains(g.Spec.Handoff, "BRIEFING-FOR-"+g.Spec.PaneID) || !r.sawInRequest("BRIEFING-FOR-"+g.Spec.PaneID) {
			t.Errorf("goal in %s: the briefing is not in its hand-off (%q) or first prompt", g.Spec.PaneID, g.Spec.Handoff)
		}
		gs = append(gs, g)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(launched, []string{"pa", "pc", "pb"}) {
		t.Errorf("launched %v, want pa, pc (priority 3), pb", launched)
	}
	slices.SortFunc(gs, func(a, b goal.Goal) int { return a.StartedAt.Compare(*b.StartedAt) })
	for i := 1; i < len(gs); i++ {
		if gs[i].StartedAt.Before(*gs[i-1].EndedAt) {
			t.Errorf("goal in %s started before the one in %s ended: the group's limit is 1", gs[i].Spec.PaneID, gs[i-1].Spec.PaneID)
		}
	}
}

// A goal of a group waits for its pane while another goal works there (a goal of no group
// still starts as asked), and while its group is closed; it starts when both are free.
func TestGroupGoalWaitsForItsPaneAndItsOwner(t *testing.T) {
	t.Parallel()
	r := newRig(t, paneScript(), func(o *goal.Options) { o.MaxConcurrent = 5 })
	solo := r.mustStart(r.spec(trueCheck, func(s *goal.Spec) { s.PaneID, s.Goal = "shared", holdLong+": keep the pane busy" }))
	waitStatus(t, r, solo.ID, goal.StatusRunning, 15*time.Second)
	r.svc.OpenGroup("fleet-y", goal.GroupOwner{})
	task := r.mustStart(r.spec(trueCheck, func(s *goal.Spec) { s.PaneID, s.Group = "shared", "fleet-y" }))
	time.Sleep(300 * time.Millisecond)
	if g, _ := r.svc.Get(context.Background(), task.ID); g.Status != goal.StatusPending {
		t.Fatalf("the group's goal is %s while another goal works in its pane", g.Status)
	}
	r.svc.CloseGroup("fleet-y")
	if err := r.svc.Abort(context.Background(), solo.ID); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if g, _ := r.svc.Get(context.Background(), task.ID); g.Status != goal.StatusPending {
		t.Fatalf("the goal of a closed group is %s", g.Status)
	}
	r.svc.OpenGroup("fleet-y", goal.GroupOwner{})
	if g, _ := r.wait(task.ID); g.Status != goal.StatusCompleted {
		t.Fatalf("the group's goal once its pane and group were free: %s %s", g.Status, g.Report)
	}
}

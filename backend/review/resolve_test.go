package review_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/fleet"
	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/review"
	"github.com/clusterspace/clusterspace/backend/store"
	"github.com/clusterspace/clusterspace/backend/store/storetest"
	"github.com/clusterspace/clusterspace/backend/worktree"
)

// saveFleet stores a fleet with the tasks given.
func saveFleet(t *testing.T, st *store.Store, id string, tasks ...fleet.Task) fleet.Fleet {
	t.Helper()
	now := time.Now().UTC().Truncate(time.Millisecond)
	for i := range tasks {
		tasks[i].Seq = i
		if tasks[i].CreatedAt.IsZero() {
			tasks[i].CreatedAt = now
		}
	}
	f := fleet.Fleet{ID: id, Name: id, Status: fleet.StatusCompleted, Tasks: tasks, CreatedAt: now, UpdatedAt: now}
	if err := st.SaveFleet(context.Background(), f); err != nil {
		t.Fatal(err)
	}
	return f
}

// saveGoal stores a goal.
func saveGoal(t *testing.T, st *store.Store, g goal.Goal) {
	t.Helper()
	now := time.Now().UTC()
	g.CreatedAt, g.UpdatedAt = now, now
	if err := st.CommitGoal(context.Background(), &goal.Commit{Goal: &g}); err != nil {
		t.Fatal(err)
	}
}

func task(id string, status fleet.TaskStatus, goalID string, wt *worktree.Worktree) fleet.Task {
	return fleet.Task{TaskSpec: fleet.TaskSpec{ID: id, Goal: "do " + id, Pane: "pane-" + id}, Status: status, GoalID: goalID, Worktree: wt}
}

func TestResolve(t *testing.T) {
	ctx := context.Background()
	st, _ := storetest.Open(t)
	fl, gs := review.StoreFleets(st), review.StoreGoals(st)
	wtA := &worktree.Worktree{Repo: "/r", Dir: "/r/.git/wt/a", Branch: "fleet/fleet-1/a", Base: "abc", Target: "main"}
	saveFleet(t, st, "fleet-1",
		task("a", fleet.TaskCompleted, "goal-a", wtA),
		task("plain", fleet.TaskCompleted, "goal-plain", nil),
		task("later", fleet.TaskRunning, "goal-later", &worktree.Worktree{Repo: "/r", Branch: "fleet/fleet-1/later"}))
	saveGoal(t, st, goal.Goal{ID: "goal-a", Status: goal.StatusCompleted, Spec: goal.Spec{Goal: "do a", Group: "fleet-1"}})
	saveGoal(t, st, goal.Goal{ID: "goal-own", Status: goal.StatusCompleted,
		Spec: goal.Spec{Goal: "alone", Worktree: &worktree.Worktree{Repo: "/r", Branch: "goal/own", Base: "abc"}}})
	saveGoal(t, st, goal.Goal{ID: "goal-bare", Status: goal.StatusFailed, Spec: goal.Spec{Goal: "no branch"}})

	s, err := review.Resolve(ctx, fl, gs, "fleet-1/a")
	if err != nil {
		t.Fatal(err)
	}
	if s.Ref != "fleet-1/a" || s.Kind != review.KindTask || s.FleetID != "fleet-1" || s.TaskID != "a" || s.GoalID != "goal-a" ||
		s.Worktree.Branch != wtA.Branch || s.Status != "completed" || s.Running() {
		t.Fatalf("fleet-1/a resolved to %+v", s)
	}
	// A task's goal id names the task, not the goal.
	s, err = review.Resolve(ctx, fl, gs, "goal-a")
	if err != nil || s.Ref != "fleet-1/a" || s.Kind != review.KindTask {
		t.Fatalf("goal-a resolved to %+v, %v", s, err)
	}
	// A task's goal the store lost still names the task.
	s, err = review.Resolve(ctx, fl, gs, "goal-later")
	if err != nil || s.Ref != "fleet-1/later" || !s.Running() {
		t.Fatalf("goal-later resolved to %+v, %v", s, err)
	}
	s, err = review.Resolve(ctx, fl, gs, " goal-own ")
	if err != nil || s.Ref != "goal-own" || s.Kind != review.KindGoal || s.Worktree.Branch != "goal/own" || s.Running() {
		t.Fatalf("goal-own resolved to %+v, %v", s, err)
	}

	for _, c := range []struct {
		ref, want string
		notFound  bool
	}{
		{"fleet-1/nope", "fleet fleet-1 has no task nope; its tasks are a, plain, later", true},
		{"fleet-9/a", "fleet fleet-9 does not exist", true},
		{"goal-zzz", "no goal or fleet task is goal-zzz: give FLEET_ID/TASK_ID", true},
		{"fleet-1/plain", "task plain of fleet fleet-1 ran without a worktree, so it has no branch to review: give the fleet (or the task) isolation: worktree", false},
		{"goal-plain", "task plain of fleet fleet-1 ran without a worktree", false},
		{"goal-bare", "goal goal-bare ran without its own worktree, so it has no branch to review: run a goal with `clusterspace goal run --worktree`", false},
		{"fleet-1", "fleet-1 is a fleet; review one of its tasks as fleet-1/TASK_ID (its tasks are a, plain, later)", false},
		{"", "ref: is empty", false},
		{"fleet-1/", "is not FLEET_ID/TASK_ID", false},
		{"a/b/c", "is not FLEET_ID/TASK_ID", false},
		{"goal-\x1b", "control character", false},
	} {
		_, err := review.Resolve(ctx, fl, gs, c.ref)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Resolve(%q) = %v; want an error saying %q", c.ref, err, c.want)
			continue
		}
		var fe *review.FieldError
		if c.notFound != errors.Is(err, review.ErrNotFound) || c.notFound == errors.As(err, &fe) {
			t.Errorf("Resolve(%q) = %v (%T): not found should be %v, else a field error on ref", c.ref, err, err, c.notFound)
		}
	}
}

// The latest of two tasks that ran as the same goal is the one a goal id names.
func TestResolveLatestTaskOfGoal(t *testing.T) {
	ctx := context.Background()
	st, _ := storetest.Open(t)
	old := task("x", fleet.TaskFailed, "goal-x", &worktree.Worktree{Repo: "/r", Branch: "fleet/old/x"})
	old.CreatedAt = time.Now().Add(-time.Hour).UTC().Truncate(time.Millisecond)
	saveFleet(t, st, "old", old)
	saveFleet(t, st, "new", task("x", fleet.TaskCompleted, "goal-x", &worktree.Worktree{Repo: "/r", Branch: "fleet/new/x"}))
	s, err := review.Resolve(ctx, review.StoreFleets(st), review.StoreGoals(st), "goal-x")
	if err != nil || s.Ref != "new/x" {
		t.Fatalf("goal-x resolved to %+v, %v; want the later task new/x", s, err)
	}
}

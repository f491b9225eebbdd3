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

// reopens records what Send asked to re-open; fail makes the next re-open fail.
type reopens struct {
	calls []string
	fail  error
}

func (r *reopens) ReopenTask(_ context.Context, fleetID, taskID, feedback string) error {
	if r.fail != nil {
		return r.fail
	}
	r.calls = append(r.calls, "task "+fleetID+"/"+taskID+"\n"+feedback)
	return nil
}

func (r *reopens) ReopenGoal(_ context.Context, goalID, feedback string) error {
	if r.fail != nil {
		return r.fail
	}
	r.calls = append(r.calls, "goal "+goalID+"\n"+feedback)
	return nil
}

// reviewed is a store with a finished fleet task on changedRepo's branch and a service over it.
func reviewed(t *testing.T) (*review.Service, *store.Store, *reopens) {
	t.Helper()
	st, _ := storetest.Open(t)
	subj := changedRepo(t)
	wt := subj.Worktree
	saveFleet(t, st, "fleet-1", task("a", fleet.TaskCompleted, "goal-a", &wt), task("b", fleet.TaskRunning, "goal-b", &wt))
	saveGoal(t, st, goal.Goal{ID: "goal-own", Status: goal.StatusFailed, Spec: goal.Spec{Goal: "alone", Worktree: &wt}})
	r := &reopens{}
	return review.NewService(st, review.StoreFleets(st), review.StoreGoals(st), r), st, r
}

func TestCommentsAreCheckedAtTheEdge(t *testing.T) {
	ctx := context.Background()
	svc, _, _ := reviewed(t)
	for _, c := range []struct {
		in           review.NewComment
		field, words string
	}{
		{review.NewComment{Body: "  \n"}, "body", "is empty"},
		{review.NewComment{Body: strings.Repeat("x", review.MaxCommentBytes+1)}, "body", "at most 16384 (16 KiB)"},
		{review.NewComment{Body: "bell\a"}, "body", "control character U+0007"},
		{review.NewComment{File: "keep.txt", Line: -1, Body: "x"}, "line", "is -1"},
		{review.NewComment{Line: 3, Body: "x"}, "line", "give its file too"},
		{review.NewComment{File: "keep.txt", Side: "left", Body: "x"}, "side", `is "left"; give "new"`},
		{review.NewComment{File: "other.txt", Body: "x"}, "file", `"other.txt" is not a file of fleet-1/a's change; its files are added.txt`},
		{review.NewComment{File: "a\nb", Body: "x"}, "file", "control character"},
	} {
		_, err := svc.AddComment(ctx, "fleet-1/a", c.in)
		var fe *review.FieldError
		if !errors.As(err, &fe) || fe.Field != c.field || !strings.Contains(err.Error(), c.words) {
			t.Errorf("AddComment(%+v) = %v; want a field error on %s saying %q", c.in, err, c.field, c.words)
		}
	}
	if _, err := svc.AddComment(ctx, "fleet-1/zz", review.NewComment{Body: "x"}); !errors.Is(err, review.ErrNotFound) {
		t.Errorf("a comment on an unknown task: %v", err)
	}
	// Tabs and new lines are text; the side defaults to the branch's; the goal id of a task
	// keeps the comment under the task's ref; a renamed file may be named by its old path.
	c, err := svc.AddComment(ctx, "goal-a", review.NewComment{File: "src/old.go", Line: 2, Body: "one\n\ttwo"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Ref != "fleet-1/a" || c.File != "src/new.go" || c.Side != "new" || c.SentAt != nil || !strings.HasPrefix(c.ID, "rc-") || c.CreatedAt.IsZero() {
		t.Fatalf("comment = %+v", c)
	}
	list, err := svc.Comments(ctx, "fleet-1/a")
	if err != nil || len(list) != 1 || list[0].ID != c.ID || list[0].Body != "one\n\ttwo" {
		t.Fatalf("comments = %+v, %v", list, err)
	}
}

func TestSendComposesFeedbackAndMarksSent(t *testing.T) {
	ctx := context.Background()
	svc, st, r := reviewed(t)
	if _, err := svc.Send(ctx, "fleet-1/a", ""); !errors.Is(err, review.ErrNothingToSend) || !strings.Contains(err.Error(), "there is nothing to send for fleet-1/a") {
		t.Fatalf("an empty send: %v", err)
	}
	add := func(ref string, in review.NewComment) review.Comment {
		t.Helper()
		c, err := svc.AddComment(ctx, ref, in)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond) // their order is their time's
		return c
	}
	add("fleet-1/a", review.NewComment{File: "keep.txt", Line: 4, Body: "four is not wanted"})
	add("fleet-1/a", review.NewComment{Body: "Tests for this, please."})
	add("fleet-1/a", review.NewComment{File: "added.txt", Body: "why this file?\nIt is unused."})
	add("fleet-1/a", review.NewComment{File: "keep.txt", Line: 2, Side: "old", Body: "keep the word two"})
	gone := add("fleet-1/a", review.NewComment{File: "gone.txt", Body: "never mind"})
	if err := svc.DeleteComment(ctx, gone.ID); err != nil {
		t.Fatal(err)
	}
	add("goal-own", review.NewComment{Body: "the goal's own"})

	// A running task is refused, its comments kept.
	add("fleet-1/b", review.NewComment{Body: "later"})
	if _, err := svc.Send(ctx, "fleet-1/b", "x"); !errors.Is(err, review.ErrBusy) ||
		!strings.Contains(err.Error(), "task b of fleet fleet-1 is running; steer it instead, or wait until it ends") {
		t.Fatalf("sending to a running task: %v", err)
	}
	// A re-open that fails sends nothing and marks nothing.
	r.fail = errors.New("fleet fleet-1 is busy")
	if _, err := svc.Send(ctx, "fleet-1/a", ""); err == nil || !strings.Contains(err.Error(), "was not sent (its comments stay unsent): fleet fleet-1 is busy") {
		t.Fatalf("a failed re-open: %v", err)
	}
	r.fail = nil
	if unsent, _ := st.ReviewComments(ctx, "fleet-1/a", true); len(unsent) != 4 {
		t.Fatalf("%d unsent after a failed send; want 4", len(unsent))
	}

	sent, err := svc.Send(ctx, "goal-a", "  And rebase on main.  ")
	if err != nil {
		t.Fatal(err)
	}
	want := "A person reviewed your work on branch work and sent it back with 4 comments. Address each comment, then verify again.\n" +
		"\n" +
		"added.txt (the whole file): why this file?\n  It is unused.\n" +
		"\n" +
		"keep.txt:2 (a line the change removed, numbered as before it): keep the word two\n" +
		"keep.txt:4: four is not wanted\n" +
		"\n" +
		"On the whole change:\n" +
		"- Tests for this, please.\n" +
		"\n" +
		"Note: And rebase on main."
	if sent.Reopened != "fleet-1/a" || sent.Feedback != want {
		t.Fatalf("sent %q:\n%s\nwant:\n%s", sent.Reopened, sent.Feedback, want)
	}
	if len(r.calls) != 1 || r.calls[0] != "task fleet-1/a\n"+want {
		t.Fatalf("re-opened %q", r.calls)
	}
	all, _ := svc.Comments(ctx, "fleet-1/a")
	for _, c := range all {
		if c.SentAt == nil {
			t.Errorf("comment %+v was not marked sent", c)
		}
	}
	if len(all) != 4 {
		t.Errorf("%d comments after the send; want the 4 kept, sent", len(all))
	}
	if err := svc.DeleteComment(ctx, all[0].ID); !errors.Is(err, review.ErrSent) {
		t.Errorf("deleting a sent comment: %v", err)
	}
	if err := svc.DeleteComment(ctx, "rc-none"); !errors.Is(err, review.ErrNotFound) {
		t.Errorf("deleting an unknown comment: %v", err)
	}
	// Sent comments are not sent again; a note alone still goes.
	if _, err := svc.Send(ctx, "fleet-1/a", ""); !errors.Is(err, review.ErrNothingToSend) {
		t.Fatalf("a second send of the same comments: %v", err)
	}
	sent, err = svc.Send(ctx, "goal-own", "")
	if err != nil || sent.Reopened != "goal-own" || !strings.HasPrefix(r.calls[1], "goal goal-own\nA person reviewed your work on branch work and sent it back with 1 comment.") ||
		!strings.HasSuffix(r.calls[1], "On the whole change:\n- the goal's own") {
		t.Fatalf("goal send %+v, %v: %q", sent, err, r.calls)
	}
	if _, err := svc.Send(ctx, "goal-own", "bad\x00note"); !strings.Contains(errString(err), "note: holds the control character") {
		t.Fatalf("a bad note: %v", err)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

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

package fleet_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/fleet"
	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

func (r *rig) bulkUntil(id, what string, cond func(fleet.Fleet) bool) fleet.Fleet {
	r.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		f, err := r.eng.Fleets.Get(context.Background(), id)
		if err == nil && cond(f) {
			return f
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("waiting for %s: %+v (requests %v)", what, f.Tasks, r.order())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (r *rig) bulkGoalStatus(id string) goal.Status {
	g, err := r.eng.Goals.Get(context.Background(), id)
	if err != nil {
		r.t.Fatal(err)
	}
	return g.Status
}

func (r *rig) bulkOK(f fleet.Fleet, action fleet.Action, text string, ids ...string) []fleet.Outcome {
	r.t.Helper()
	out, err := r.eng.Fleets.Bulk(context.Background(), f.ID, ids, action, text)
	if err != nil {
		r.t.Fatalf("bulk %s %v: %v", action, ids, err)
	}
	for _, o := range out {
		if !o.OK {
			r.t.Fatalf("bulk %s: task %s: %s", action, o.TaskID, o.Error)
		}
	}
	return out
}

// A bad bulk request is refused naming the field, and changes nothing; a task in a state the
// action does not fit gets its own error while the others are done.
func TestBulkRefusesBadRequestsAndReportsEachTask(t *testing.T) {
	held, release := heldPane("slow-term", call("wait", map[string]int{"ms": 100}))
	r := newRig(t, held)
	f := r.start("name: refuse\ntasks:\n  - {id: slow, goal: Slow, check_shell: \"true\"}\n  - {id: after, goal: After, depends_on: [slow], check_shell: \"true\"}\n")
	f = r.bulkUntil(f.ID, "slow to run", func(f fleet.Fleet) bool { return taskOf(t, f, "slow").Status == fleet.TaskRunning })
	for _, c := range []struct {
		ids    []string
		action fleet.Action
		text   string
		field  string
	}{
		{[]string{"slow"}, "explode", "", "action"},
		{nil, fleet.ActionPause, "", "task_ids"},
		{[]string{"slow", "nope"}, fleet.ActionAbort, "", "task_ids"},
		{[]string{"slow", "slow"}, fleet.ActionAbort, "", "task_ids"},
		{[]string{"slow"}, fleet.ActionSteer, "  ", "text"},
	} {
		_, err := r.eng.Fleets.Bulk(context.Background(), f.ID, c.ids, c.action, c.text)
		var fe *fleet.FieldError
		if !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("bulk %s %v: %v, want a mistake in %s", c.action, c.ids, err, c.field)
		}
	}
	if _, err := r.eng.Fleets.Bulk(context.Background(), "fleet-none", []string{"a"}, fleet.ActionAbort, ""); !errors.Is(err, fleet.ErrNotFound) {
		t.Errorf("unknown fleet: %v", err)
	}
	if got := taskOf(t, r.bulkUntil(f.ID, "", func(fleet.Fleet) bool { return true }), "slow"); got.Status != fleet.TaskRunning {
		t.Fatalf("a refused request changed the task: %+v", got)
	}
	// Pausing a waiting task does not fit; the running one pauses all the same.
	out, err := r.eng.Fleets.Bulk(context.Background(), f.ID, []string{"after", "slow"}, fleet.ActionPause, "")
	if err != nil || len(out) != 2 || out[0].OK || !strings.Contains(out[0].Error, "only a running task pauses") || !out[1].OK {
		t.Fatalf("pause: %+v %v", out, err)
	}
	r.bulkUntil(f.ID, "slow's goal to pause", func(f fleet.Fleet) bool { return r.bulkGoalStatus(taskOf(t, f, "slow").GoalID) == goal.StatusPaused })
	release()
	r.bulkOK(f, fleet.ActionResume, "", "slow")
	if f = r.wait(f.ID); f.Status != fleet.StatusCompleted {
		t.Fatalf("after resume: %s %+v", f.Status, f.Tasks)
	}
}

// Steer reaches a running task's next turn, and a waiting task's first prompt.
func TestBulkSteerReachesRunningAndWaitingTasks(t *testing.T) {
	r := newRig(t, func(pane string, turn int, req llmtest.Request) llmtest.Reply {
		body := string(req.Body)
		if strings.Contains(body, "USE-PORT-8080") {
			return claim(pane + " used the port it was told")
		}
		if pane == "api-term" {
			return call("wait", map[string]int{"ms": 100})
		}
		return call("abort_with_report", map[string]string{"reason": "nobody told me the port", "what_was_learned": "-"})
	})
	f := r.start("name: steer\ntasks:\n  - {id: api, goal: Serve the API, check_shell: \"true\"}\n  - {id: web, goal: Point the web app at the API, depends_on: [api], check_shell: \"true\"}\n")
	f = r.bulkUntil(f.ID, "api to run", func(f fleet.Fleet) bool { return taskOf(t, f, "api").Status == fleet.TaskRunning })
	r.bulkOK(f, fleet.ActionSteer, "USE-PORT-8080", "api", "web")
	if f = r.wait(f.ID); f.Status != fleet.StatusCompleted {
		t.Fatalf("fleet %s: %+v", f.Status, f.Tasks)
	}
	web := r.requests("web-term")
	if len(web) == 0 || !strings.Contains(string(web[0].Body), "USE-PORT-8080") {
		t.Fatal("the waiting task's first prompt lacks the steering message")
	}
}

// Abort of a running task blocks its dependants with the reason; Retry of the blocked task
// retries what blocks it, and both then complete.
func TestBulkAbortThenRetryOfTheBlockedTask(t *testing.T) {
	held, retried := heldPane("build-term", call("wait", map[string]int{"ms": 100})) // until the retry
	r := newRig(t, held)
	f := r.start("name: abort\ntasks:\n  - {id: build, goal: Build, check_shell: \"true\"}\n  - {id: test, goal: Test, depends_on: [build], check_shell: \"true\"}\n  - {id: ship, goal: Ship, depends_on: [test], check_shell: \"true\"}\n")
	f = r.bulkUntil(f.ID, "build to run", func(f fleet.Fleet) bool { return taskOf(t, f, "build").Status == fleet.TaskRunning })
	r.bulkOK(f, fleet.ActionAbort, "", "build")
	f = r.wait(f.ID)
	if f.Status != fleet.StatusFailed || taskOf(t, f, "build").Status != fleet.TaskAborted {
		t.Fatalf("after abort: %s %+v", f.Status, f.Tasks)
	}
	if test := taskOf(t, f, "test"); test.Status != fleet.TaskBlocked || !strings.Contains(test.Reason, "task build, which it depends on, aborted") {
		t.Fatalf("test: %+v", test)
	}
	retried()
	r.bulkOK(f, fleet.ActionRetry, "", "ship") // blocked twice removed: retries build
	if f = r.wait(f.ID); f.Status != fleet.StatusCompleted {
		t.Fatalf("after retry: %s %+v", f.Status, f.Tasks)
	}
}

// Abort of a waiting task: it never starts, its dependants are blocked, the rest runs.
func TestBulkAbortOfAWaitingTask(t *testing.T) {
	held, release := heldPane("a-term", call("wait", map[string]int{"ms": 100}))
	r := newRig(t, held)
	f := r.start("name: waiting\ntasks:\n  - {id: a, goal: A, check_shell: \"true\"}\n  - {id: b, goal: B, depends_on: [a], check_shell: \"true\"}\n  - {id: c, goal: C, depends_on: [b], check_shell: \"true\"}\n")
	f = r.bulkUntil(f.ID, "a to run", func(f fleet.Fleet) bool { return taskOf(t, f, "a").Status == fleet.TaskRunning })
	r.bulkOK(f, fleet.ActionAbort, "", "b")
	release()
	f = r.wait(f.ID)
	want := map[string]fleet.TaskStatus{"a": fleet.TaskCompleted, "b": fleet.TaskAborted, "c": fleet.TaskBlocked}
	for id, st := range want {
		if got := taskOf(t, f, id); got.Status != st {
			t.Errorf("task %s %s, want %s", id, got.Status, st)
		}
	}
	if n := len(r.requests("b-term")); n != 0 {
		t.Errorf("the aborted waiting task reached the model %d times", n)
	}
}

// Steer of a blocked task starts it past the failed dependency, with the person's message and
// the failed task's report in its first prompt.
func TestBulkSteerStartsABlockedTask(t *testing.T) {
	r := newRig(t, func(pane string, turn int, req llmtest.Request) llmtest.Reply {
		if pane == "a-term" {
			return call("abort_with_report", map[string]string{"reason": "MIRROR-DOWN", "what_was_learned": "-"})
		}
		return claim(pane + " done")
	})
	f := r.run("name: past\ntasks:\n  - {id: a, goal: Fetch, check_shell: \"true\"}\n  - {id: b, goal: Build offline, depends_on: [a], check_shell: \"true\"}\n  - {id: c, goal: Ship, depends_on: [b], check_shell: \"true\"}\n")
	if taskOf(t, f, "b").Status != fleet.TaskBlocked {
		t.Fatalf("before: %+v", f.Tasks)
	}
	r.bulkOK(f, fleet.ActionSteer, "GO-OFFLINE: use the vendored copy", "b")
	f = r.wait(f.ID)
	if b, c := taskOf(t, f, "b"), taskOf(t, f, "c"); b.Status != fleet.TaskCompleted || c.Status != fleet.TaskCompleted {
		t.Fatalf("after steer: b %+v, c %+v", b, c)
	}
	if f.Status != fleet.StatusFailed { // a still failed
		t.Errorf("fleet %s, want failed (task a aborted)", f.Status)
	}
	body := string(r.requests("b-term")[0].Body)
	for _, want := range []string{"GO-OFFLINE: use the vendored copy", "MIRROR-DOWN"} {
		if !strings.Contains(body, want) {
			t.Errorf("b's first prompt lacks %q", want)
		}
	}
}

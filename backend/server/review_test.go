package server

import (
	"net/url"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/api"
	"github.com/clusterspace/clusterspace/backend/engine"
	"github.com/clusterspace/clusterspace/backend/fleet"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
	"github.com/clusterspace/clusterspace/backend/review"
)

// reviewHarness is `serve` over a real engine (the app's door: re-opened work goes on at
// once) whose scripted agent in pane a-term writes
// a.txt, and once a review asks it to, writes "second" in it; the agent in slow-term waits
// until aborted.
func reviewHarness(t *testing.T) *fleetHarness {
	t.Helper()
	model := llmtest.New(t, llmtest.Script{Replies: []llmtest.Reply{{Repeat: 1 << 30, Compute: func(req llmtest.Request) llmtest.Reply {
		body := string(req.Body)
		pane := req.Pane()
		switch {
		case pane == "":
			return llmtest.Text("no pane")
		case pane == "slow-term": // a different wait each time, or the loop guard ends it
			return llmtest.Calls(llmtest.Call("wait", map[string]int{"ms": 200 + req.AssistantTurns()}))
		case strings.Contains(body, "a.txt:1: say second") && !strings.Contains(body, "echo second"):
			return llmtest.Calls(llmtest.Call("write_to_terminal", map[string]string{"pane_id": pane, "text": "echo second > a.txt"}))
		case !strings.Contains(body, "echo first"):
			return llmtest.Calls(llmtest.Call("write_to_terminal", map[string]string{"pane_id": pane, "text": "echo first > a.txt"}))
		}
		return llmtest.Calls(llmtest.Call("claim_complete", map[string]string{"rationale": "a.txt written"}))
	}}}})
	return serveOn(t, model, engine.WithCommand("serve"))
}

// baseRepo is a new git repository on main with one empty commit, "base".
func baseRepo(t *testing.T) string {
	t.Helper()
	repo := t.TempDir()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"commit", "-q", "--allow-empty", "-m", "base"}} {
		if out, err := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-C", repo}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return repo
}

// The review's routes over a real fleet run in worktrees: a task's change is read, a comment
// left on it, and sending it re-opens the task through its fleet, whose agent reads the
// feedback, changes its branch and verifies again; refusals answer 400, 404 and 409.
func TestReviewRoutesSendACommentBackToTheAgent(t *testing.T) {
	h := reviewHarness(t)
	repo := baseRepo(t)
	// No sandbox: a confined shell starts through the binary's sandbox-exec, which this test
	// binary is not; the work dir names the repository the worktrees are made in.
	var f fleet.Fleet
	h.call(t, "POST", "/api/fleets", "application/json", fleetJSON(map[string]any{"yaml": `name: reviewed
concurrency: 2
isolation: worktree
tasks:
  - {id: a, goal: Write a.txt, pane: a-term, check_shell: "test -s a.txt"}
  - {id: slow, goal: Take your time, pane: slow-term, check_shell: "true"}
`, "settings": map[string]any{"workDir": repo}}), 201, &f)
	t.Cleanup(func() { h.call(t, "POST", "/api/fleets/"+f.ID+"/abort", "", "", 200, nil) })
	h.until(t, f.ID, "a to complete", func(f fleet.Fleet) bool {
		return fleetTaskStatus(f, "a") == fleet.TaskCompleted && fleetTaskStatus(f, "slow") == fleet.TaskRunning
	})
	ref := f.ID + "/a"
	q := func(path string, kv ...string) string {
		v := url.Values{}
		for i := 0; i < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return path + "?" + v.Encode()
	}

	var page review.ChangesPage
	h.call(t, "GET", q("/api/review/changes", "ref", ref), "", "", 200, &page)
	if page.Ref != ref || page.Kind != "task" || page.Branch != "fleet/"+f.ID+"/a" || len(page.Files) != 1 || page.Files[0].Path != "a.txt" ||
		page.Files[0].Status != "added" || !strings.Contains(page.Patch, "+first\n") || page.Note != "" {
		t.Fatalf("changes of %s: %+v", ref, page)
	}
	h.call(t, "GET", q("/api/review/changes", "ref", f.ID+"/slow"), "", "", 200, &page)
	if !strings.Contains(page.Note, "is running") {
		t.Errorf("a running task's page says nothing of it: %+v", page)
	}
	var bad fleetErrorBody
	h.call(t, "GET", q("/api/review/changes", "ref", f.ID+"/nope"), "", "", 404, &bad)
	if bad.Field != "ref" || !strings.Contains(bad.Error, "has no task nope; its tasks are a, slow") {
		t.Errorf("an unknown task: %+v", bad)
	}
	h.call(t, "GET", q("/api/review/changes", "ref", ref, "file", "b.txt"), "", "", 400, &bad)
	if bad.Field != "file" {
		t.Errorf("an unknown file: %+v", bad)
	}
	h.call(t, "GET", q("/api/review/changes", "ref", ref, "limit", "many"), "", "", 400, &bad)
	if bad.Field != "limit" {
		t.Errorf("a limit that is no number: %+v", bad)
	}

	h.call(t, "POST", "/api/review/comments", "application/json", `{"ref": "`+ref+`", "file": "a.txt", "line": 1, "body": ""}`, 400, &bad)
	if bad.Field != "body" {
		t.Errorf("an empty comment: %+v", bad)
	}
	var c review.Comment
	h.call(t, "POST", "/api/review/comments", "application/json", `{"ref": "`+ref+`", "file": "a.txt", "line": 1, "body": "say second"}`, 201, &c)
	if c.Ref != ref || c.File != "a.txt" || c.Line != 1 || c.Side != "new" || c.ID == "" {
		t.Fatalf("comment: %+v", c)
	}
	var list api.ReviewCommentsResult
	h.call(t, "GET", q("/api/review/comments", "ref", ref), "", "", 200, &list)
	if len(list.Comments) != 1 || list.Comments[0].ID != c.ID || list.Comments[0].SentAt != nil {
		t.Fatalf("comments: %+v", list)
	}

	h.call(t, "POST", "/api/review/send", "application/json", `{"ref": "`+f.ID+`/slow", "note": "hurry"}`, 409, &bad)
	if !strings.Contains(bad.Error, "task slow of fleet "+f.ID+" is running; steer it instead, or wait until it ends") {
		t.Errorf("sending to a running task: %+v", bad)
	}
	var sent review.Sent
	h.call(t, "POST", "/api/review/send", "application/json", `{"ref": "`+ref+`", "note": "keep it short"}`, 200, &sent)
	if sent.Reopened != ref || !strings.Contains(sent.Feedback, "a.txt:1: say second") || !strings.Contains(sent.Feedback, "Note: keep it short") {
		t.Fatalf("sent: %+v", sent)
	}
	// The agent reads it, writes a.txt again, and the task verifies again on its branch.
	var after fleet.Fleet
	deadline := time.Now().Add(20 * time.Second)
	for {
		h.call(t, "GET", "/api/fleets/"+f.ID, "", "", 200, &after)
		task, _ := after.Task("a")
		h.call(t, "GET", q("/api/review/changes", "ref", ref), "", "", 200, &page)
		if task.Status == fleet.TaskCompleted && strings.Contains(page.Patch, "+second\n") {
			if task.Review == nil || len(task.Review.Story) == 0 || task.Review.Story[len(task.Review.Story)-1].Kind != "reopened" {
				t.Errorf("a's story after the review: %+v", task.Review)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a did not take the review: %s, patch:\n%s", task.Status, page.Patch)
		}
		time.Sleep(50 * time.Millisecond)
	}

	h.call(t, "GET", q("/api/review/comments", "ref", ref), "", "", 200, &list)
	if len(list.Comments) != 1 || list.Comments[0].SentAt == nil {
		t.Fatalf("comments after the send: %+v", list)
	}
	h.call(t, "DELETE", "/api/review/comments/"+c.ID, "", "", 409, &bad)
	h.call(t, "POST", "/api/review/send", "application/json", `{"ref": "`+ref+`"}`, 409, &bad)
	if !strings.Contains(bad.Error, "nothing to send") {
		t.Errorf("a second send with nothing new: %+v", bad)
	}
	var other review.Comment
	h.call(t, "POST", "/api/review/comments", "application/json", `{"ref": "`+ref+`", "body": "on the whole"}`, 201, &other)
	h.call(t, "DELETE", "/api/review/comments/"+other.ID, "", "", 204, nil)
	h.call(t, "DELETE", "/api/review/comments/"+other.ID, "", "", 404, &bad)
}

// A goal run in its own worktree is reviewed by its id: sending a comment re-opens the goal
// through the Goal Runner, whose agent changes its branch and verifies again.
func TestReviewRoutesReopenAGoalRunInItsOwnWorktree(t *testing.T) {
	h := reviewHarness(t)
	repo := baseRepo(t)
	var wl struct {
		Workspaces []struct{ Panes []struct{ ID, Kind string } }
	}
	h.call(t, "GET", "/api/workspaces", "", "", 200, &wl)
	pane := ""
	for _, p := range wl.Workspaces[0].Panes {
		if p.Kind == "terminal" {
			pane = p.ID
		}
	}
	if pane == "" {
		t.Fatalf("no terminal pane to run a goal in: %+v", wl)
	}
	var g struct{ ID, Status string }
	h.call(t, "POST", "/api/goals?worktree=true", "application/json", fleetJSON(map[string]any{"paneId": pane, "goal": "Write a.txt",
		"criterion": map[string]any{"kind": "shell", "command": "test -s a.txt"}, "settings": map[string]any{"workDir": repo},
		"policy": map[string]any{"risk": "write_local"}}), 201, &g)
	waitGoal := func(what string, done func(review.ChangesPage) bool) {
		t.Helper()
		var page review.ChangesPage
		deadline := time.Now().Add(20 * time.Second)
		for {
			h.call(t, "GET", "/api/goals/"+g.ID, "", "", 200, &g)
			if g.Status == "completed" {
				h.call(t, "GET", "/api/review/changes?ref="+g.ID, "", "", 200, &page)
				if done(page) {
					return
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("waiting for %s: goal %s, patch:\n%s", what, g.Status, page.Patch)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	waitGoal("the goal to write a.txt", func(p review.ChangesPage) bool {
		return p.Kind == "goal" && p.Ref == g.ID && p.Branch == "goal/"+g.ID && strings.Contains(p.Patch, "+first\n")
	})
	var c review.Comment
	h.call(t, "POST", "/api/review/comments", "application/json", `{"ref": "`+g.ID+`", "file": "a.txt", "line": 1, "body": "say second"}`, 201, &c)
	var sent review.Sent
	h.call(t, "POST", "/api/review/send", "application/json", `{"ref": "`+g.ID+`"}`, 200, &sent)
	if sent.Reopened != g.ID || !strings.Contains(sent.Feedback, "a.txt:1: say second") {
		t.Fatalf("sent: %+v", sent)
	}
	waitGoal("the goal to take the review", func(p review.ChangesPage) bool { return strings.Contains(p.Patch, "+second\n") })
}

package goal_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/goal/criterion"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
	"github.com/clusterspace/clusterspace/backend/tools"
)

// waitStatus polls until the goal has the status, failing after d.
func waitStatus(t *testing.T, r *rig, id string, want goal.Status, d time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		g, _ := r.svc.Get(context.Background(), id)
		if g.Status == want {
			return time.Since(start)
		}
		if time.Since(start) > d {
			t.Fatalf("goal %s is %s after %v, want %s", id, g.Status, d, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Pause during a long tool call takes effect within a second; the interrupted call is
// reported to the model; steer reaches the model on its next turn; resume continues.
func TestPauseDuringToolCallSteerAndResume(t *testing.T) {
	t.Parallel()
	r := newRig(t, llmtest.Script{Replies: []llmtest.Reply{call("sleep", map[string]int{"ms": 60_000}), writeDone(), claim("done")}})
	events := r.broker.Subscribe(t.Context())
	g := r.mustStart(r.spec())
	waitStatus(t, r, g.ID, goal.StatusRunning, 15*time.Second)
	for len(r.srv.ChatRequests()) < 1 {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // the sleep tool is running now
	start := time.Now()
	if err := r.svc.Pause(context.Background(), g.ID); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, events, goal.EventPaused)
	if d := time.Since(start); d > time.Second {
		t.Fatalf("pause took %v", d)
	}
	if cur, _ := r.svc.Get(context.Background(), g.ID); cur.Status != goal.StatusPaused {
		t.Fatalf("status %s", cur.Status)
	}
	if err := r.svc.Steer(context.Background(), g.ID, "use the write_file tool, not sleep"); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, events, goal.EventSteered) // live, for every window, not only stored
	if err := r.svc.Resume(context.Background(), g.ID); err != nil {
		t.Fatal(err)
	}
	g, evs := r.wait(g.ID)
	if g.Status != goal.StatusCompleted {
		t.Fatalf("status %s", g.Status)
	}
	if !r.sawInRequest("interrupted: the user paused the goal while this ran") || !r.sawInRequest("[From user]: use the write_file tool, not sleep") {
		t.Fatal("the model did not hear of the pause or the steer")
	}
	types := strings.Join(eventTypes(evs), ",")
	for _, want := range []string{"paused", "steered", "resumed"} {
		if !strings.Contains(types, want) {
			t.Errorf("no %s event in %s", want, types)
		}
	}
}

func TestStepProtocolRefusesUndeclaredMutations(t *testing.T) {
	t.Parallel()
	r := newRig(t, llmtest.Script{Replies: []llmtest.Reply{
		writeDone(),
		call(tools.ToolDeclareStep, map[string]any{"step_number": 1, "title": "write", "action": "write done.txt", "success_criteria": "file exists"}),
		writeDone(),
		call(tools.ToolVerifyStep, map[string]any{"step_number": 1, "passed": true, "observation": "written", "next_action": "claim"}),
		claim("done"),
	}})
	g, _ := r.run(r.spec(func(s *goal.Spec) { s.Policy.RequireStepProtocol = true }))
	if g.Status != goal.StatusCompleted {
		t.Fatalf("status %s", g.Status)
	}
	steps, _ := r.svc.Steps(context.Background(), g.ID, 0, 10)
	if !steps[0].IsError || !strings.Contains(steps[0].Result, "requires the step protocol") || steps[2].IsError {
		t.Fatalf("steps %+v", steps)
	}
}

func TestChecklistIsShownEachTurnButNeverStored(t *testing.T) {
	t.Parallel()
	r := newRig(t, llmtest.Script{Replies: []llmtest.Reply{
		call(tools.ToolWriteTodos, map[string]any{"items": []string{"make the file", "verify it"}}),
		writeDone(),
		call(tools.ToolCompleteTodo, map[string]any{"index": 0}),
		claim("done"),
	}})
	g, _ := r.run(r.spec())
	if g.Status != goal.StatusCompleted || len(g.State.Todos) != 2 || !g.State.Todos[0].Done {
		t.Fatalf("%s todos %+v", g.Status, g.State.Todos)
	}
	// The checklist is the newest message of each request (the system prompt stays the same,
	// so a provider's prompt cache holds), and it follows the model's progress.
	reqs := r.srv.ChatRequests()
	if !strings.Contains(reqs[1].Context, "CURRENT CHECKLIST") || !strings.Contains(reqs[1].Context, "make the file  ← working on this") {
		t.Fatalf("second turn's context message: %q", reqs[1].Context)
	}
	if !strings.Contains(reqs[3].Context, "0. [x] make the file") || reqs[1].System != reqs[3].System || strings.Contains(reqs[1].System, "CHECKLIST") {
		t.Fatalf("fourth turn: context message %q; the system prompt changed or carries the checklist: %q", reqs[3].Context, reqs[3].System)
	}
	msgs, _ := r.st.GoalMessages(context.Background(), g.ID)
	for _, m := range msgs {
		if strings.Contains(m.Text(), "CURRENT CHECKLIST") {
			t.Fatal("the checklist was stored in the conversation")
		}
	}
}

func TestQueueAndDependencies(t *testing.T) {
	t.Parallel()
	r := newRig(t, llmtest.Script{Replies: []llmtest.Reply{call("sleep", map[string]int{"ms": 300}), writeDone(), claim("first done"), claim("second done")}},
		func(o *goal.Options) { o.MaxConcurrent = 1 })
	manual := func(s *goal.Spec) { s.Criterion = criterion.Spec{Kind: "manual"} }
	first := r.mustStart(r.spec())
	second := r.mustStart(r.spec(manual, func(s *goal.Spec) { s.DependsOn = []string{first.ID} }))
	waitStatus(t, r, first.ID, goal.StatusRunning, 15*time.Second)
	if g, _ := r.svc.Get(context.Background(), second.ID); g.Status != goal.StatusPending {
		t.Fatalf("second goal is %s while the first runs (limit 1)", g.Status)
	}
	if g, _ := r.wait(second.ID); g.Status != goal.StatusCompleted || g.StartedAt.Before(*mustGet(t, r, first.ID).EndedAt) {
		t.Fatalf("second goal: %s", g.Status)
	}
	// A dependant of an aborted goal is aborted with the reason.
	r.srv.Push(llmtest.Stalled("thinking", 2)) // the third goal is mid-stream when aborted
	third, _ := r.svc.Start(context.Background(), r.spec(manual, func(s *goal.Spec) { s.Settings.MaxSteps = 1 }))
	fourth, _ := r.svc.Start(context.Background(), r.spec(manual, func(s *goal.Spec) { s.DependsOn = []string{third.ID} }))
	r.svc.Abort(context.Background(), third.ID)
	g, _ := r.wait(fourth.ID)
	if g.Status != goal.StatusAborted || !strings.Contains(g.Report, "ended aborted") {
		t.Fatalf("dependant: %s %q", g.Status, g.Report)
	}
}

func mustGet(t *testing.T, r *rig, id string) *goal.Goal {
	g, err := r.svc.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return &g
}

// The service keeps at most MaxGoals goals: finished ones go oldest first; in-flight ones stay.
func TestFinishedGoalsArePrunedOldestFirst(t *testing.T) {
	t.Parallel()
	r := newRig(t, llmtest.Script{Replies: []llmtest.Reply{llmtest.Stalled("busy", 2),
		claim("a"), claim("b"), claim("c"), claim("d")}}, func(o *goal.Options) { o.MaxGoals = 3; o.MaxConcurrent = 5 })
	manual := func(s *goal.Spec) { s.Criterion = criterion.Spec{Kind: "manual"} }
	busy, _ := r.svc.Start(context.Background(), r.spec(manual)) // stays running (stalled stream)
	waitStatus(t, r, busy.ID, goal.StatusRunning, 15*time.Second)
	for len(r.srv.ChatRequests()) < 1 {
		time.Sleep(5 * time.Millisecond)
	}
	var ids []string
	for range 4 {
		g := r.mustStart(r.spec(manual))
		r.wait(g.ID)
		ids = append(ids, g.ID)
		time.Sleep(5 * time.Millisecond) // distinct update times
	}
	gs, _ := r.svc.List(context.Background())
	kept := map[string]bool{}
	for _, g := range gs {
		kept[g.ID] = true
	}
	if len(gs) != 3 || !kept[busy.ID] || !kept[ids[3]] || !kept[ids[2]] || kept[ids[0]] {
		t.Fatalf("kept %v (busy %s, finished %v)", kept, busy.ID, ids)
	}
	r.svc.Abort(context.Background(), busy.ID)
}

// A vision model sees a screenshot after each browser action, and at most the last three.
func TestScreenshotsAfterBrowserActionsForVisionModels(t *testing.T) {
	t.Parallel()
	look := call("browser_look", map[string]string{"pane_id": "web-1"})
	r := newRig(t, llmtest.Script{Replies: []llmtest.Reply{look, look, look, look, writeDone(), claim("done")}})
	r.mods.m.Vision = true // a service started now resolves a vision model
	r.start(func(o *goal.Options) {
		o.Screenshot = func(ctx context.Context, paneID string) ([]byte, error) {
			return []byte("\xff\xd8\xff\xe0 jpeg of " + paneID), nil
		}
	})
	g, _ := r.run(r.spec())
	if g.Status != goal.StatusCompleted {
		t.Fatalf("status %s", g.Status)
	}
	reqs := r.srv.ChatRequests()
	count := func(i int) int { return strings.Count(string(reqs[i].Body), "data:image/jpeg;base64,") }
	if count(0) != 0 || count(1) != 1 || count(3) != 3 || count(4) != 3 {
		t.Fatalf("images per request: %d %d %d %d %d", count(0), count(1), count(2), count(3), count(4))
	}

	// The dashboard shows each step's pictures, all of them, from the store.
	ctx := context.Background()
	steps, err := r.svc.Steps(ctx, g.ID, 0, 10)
	if err != nil || len(steps) != 6 {
		t.Fatalf("%d steps, %v", len(steps), err)
	}
	// Three looks with a picture each; the fourth was blocked by the loop guard, unrun.
	for i, want := range []int{1, 1, 1, 0, 0, 0} {
		if steps[i].Images != want {
			t.Fatalf("step %d (%s) has %d pictures, want %d", steps[i].Index, steps[i].Tool, steps[i].Images, want)
		}
	}
	img, err := r.svc.StepImage(ctx, g.ID, 1, 0)
	if err != nil || img.MediaType != "image/jpeg" || !strings.Contains(string(img.Data), "jpeg of web-1") {
		t.Fatalf("first step's picture: %q %q, %v", img.MediaType, img.Data, err)
	}
	for _, bad := range [][2]int{{1, 1}, {4, 0}, {99, 0}} {
		if _, err := r.svc.StepImage(ctx, g.ID, bad[0], bad[1]); !errors.Is(err, goal.ErrNotFound) {
			t.Fatalf("step %d picture %d: want not found, got %v", bad[0], bad[1], err)
		}
	}
}

// Whoever sees an approval request can answer it at once (it is stored and waiting before it
// is announced), and a request the goal stops waiting for is closed with an event, so no
// window keeps a stale question.
func TestApprovalAnswerableWhenAnnouncedAndClosedWhenWithdrawn(t *testing.T) {
	t.Parallel()
	post := call("http_post", map[string]string{"url": "https://example.invalid"})
	r := newRig(t, llmtest.Script{Replies: []llmtest.Reply{post, post}})
	ctx := context.Background()
	events := r.broker.Subscribe(t.Context())
	g, err := r.svc.Start(ctx, r.spec())
	if err != nil {
		t.Fatal(err)
	}
	next := func(typ string) goal.Event {
		t.Helper()
		timeout := time.After(10 * time.Second)
		for {
			select {
			case ev := <-events:
				if ev.Payload.Type == typ {
					return ev.Payload
				}
			case <-timeout:
				t.Fatalf("no %s event", typ)
			}
		}
	}
	var asked agent.Approval
	json.Unmarshal(next(goal.EventApprovalRequested).Data, &asked)
	if _, err := r.svc.AnswerApproval(ctx, asked.ID, agent.ApprovalDeny, "not now"); err != nil {
		t.Fatalf("answering the request as soon as it is announced: %v", err)
	}
	next(goal.EventApprovalResolved)

	json.Unmarshal(next(goal.EventApprovalRequested).Data, &asked)
	if err := r.svc.Pause(ctx, g.ID); err != nil {
		t.Fatal(err)
	}
	var closed agent.Approval
	json.Unmarshal(next(goal.EventApprovalResolved).Data, &closed)
	if closed.ID != asked.ID || closed.Status != agent.ApprovalDeny || !strings.Contains(closed.AnswerReason, "withdrawn") {
		t.Fatalf("the withdrawn request: %+v", closed)
	}
	if pending, _ := r.svc.PendingApprovals(ctx); len(pending) != 0 {
		t.Fatalf("still pending: %+v", pending)
	}
	r.svc.Abort(ctx, g.ID)
}

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

package goal_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/goal/criterion"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
	"github.com/clusterspace/clusterspace/backend/pubsub"
	"github.com/clusterspace/clusterspace/backend/store"
	"github.com/clusterspace/clusterspace/backend/tools"
)

// A pause while a claim is being verified cuts the check off; on resume the same claim is
// verified again. It is not a failed check: no bounce, no "verification failed" for the model.
func TestPauseDuringVerificationResumesTheVerification(t *testing.T) {
	r := newRig(t, llmtest.Script{Replies: []llmtest.Reply{writeDone(), claim("done.txt is there")}})
	spec := r.spec(func(s *goal.Spec) {
		// The check marks that it started, then takes a while: long enough to pause it.
		s.Criterion = criterion.Spec{Kind: "shell", Command: "echo x >> checks; sleep 2; test -f done.txt"}
	})
	g := r.mustStart(spec)
	waitFile(t, filepath.Join(r.sandbox, "checks"))
	if err := r.svc.Pause(context.Background(), g.ID); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, r, g.ID, goal.StatusPaused, 15*time.Second)
	if err := r.svc.Resume(context.Background(), g.ID); err != nil {
		t.Fatal(err)
	}
	g, evs := r.wait(g.ID)
	if g.Status != goal.StatusCompleted || g.State.Bounces != 0 || len(findEvents(evs, goal.EventVerificationFailed)) != 0 {
		t.Fatalf("a paused verification counted against the claim: %s, %d bounces, events %v", g.Status, g.State.Bounces, eventTypes(evs))
	}
	if b, _ := os.ReadFile(filepath.Join(r.sandbox, "checks")); strings.Count(string(b), "x") != 2 {
		t.Fatalf("the check ran %d times, want 2 (cut off, then again)", strings.Count(string(b), "x"))
	}
	if r.sawInRequest("Verification failed") {
		t.Fatal("the model was told its claim failed verification")
	}
}

// The wall clock reaches a call that is running: a tool that would take a minute is cut off
// as Ctrl+C would, and the goal ends with its final report soon after its time is up.
func TestWallClockCutsOffARunningCall(t *testing.T) {
	r := newRig(t, llmtest.Script{Replies: []llmtest.Reply{
		call("slow", map[string]any{}),
		llmtest.Text("I was waiting on the slow tool when the time ran out."),
	}})
	cut := make(chan error, 1)
	r.reg.Register(tools.New("slow", "Take a minute.", tools.ReadOnly, func(ctx context.Context, _ tools.Call, _ struct{}) (tools.Result, error) {
		select {
		case <-ctx.Done():
			cut <- context.Cause(ctx)
			return tools.Result{}, context.Cause(ctx)
		case <-time.After(time.Minute):
			return tools.Result{Text: "done after a minute"}, nil
		}
	}))
	spec := r.spec(func(s *goal.Spec) { s.Settings.WallClock = goal.Duration(time.Second) })
	start := time.Now()
	g, _ := r.run(spec)
	took := time.Since(start)
	if g.Status != goal.StatusFailed || !strings.Contains(g.Report, "wall clock") || took > 10*time.Second {
		t.Fatalf("goal %s after %s: %s", g.Status, took, g.Report)
	}
	select {
	case cause := <-cut:
		if !strings.Contains(cause.Error(), "wall clock") {
			t.Fatalf("the call was cut off by %v, want the wall clock", cause)
		}
	default:
		t.Fatal("the running call was never cut off")
	}
	steps, _ := r.svc.Steps(context.Background(), g.ID, 0, 5)
	if len(steps) == 0 || !strings.Contains(steps[0].Result, "wall clock ran out") {
		t.Fatalf("the model is not told why its call stopped: %+v", steps)
	}
}

// A goal whose app is killed twice during tool calls resumes both times: the answers the
// first resume gave to the calls left open (and its marker) are stored before the next
// crash, so the model server — which, as both real APIs do, refuses a tool call without its
// result — never sees one.
func TestGoalKilledTwiceDuringToolCallsResumes(t *testing.T) {
	r := newRig(t, llmtest.Script{Replies: []llmtest.Reply{call("block", map[string]any{})}})
	started := make(chan struct{}, 4)
	r.reg.Register(tools.New("block", "Wait for the app to go away.", tools.ReadOnly, func(ctx context.Context, _ tools.Call, _ struct{}) (tools.Result, error) {
		started <- struct{}{}
		<-ctx.Done()
		return tools.Result{}, context.Cause(ctx)
	}))
	crashDuringCall := func() {
		t.Helper()
		select {
		case <-started:
		case <-time.After(15 * time.Second):
			t.Fatal("the tool call never started")
		}
		r.svc.Shutdown() // the process goes away with the call open
		r.broker.Shutdown()
	}
	g := r.mustStart(r.spec())
	crashDuringCall()
	r.srv.Push(call("block", map[string]any{}))
	r.start()
	if err := r.svc.Resume(context.Background(), g.ID); err != nil {
		t.Fatal(err)
	}
	crashDuringCall()
	r.srv.Push(writeDone(), claim("done after two restarts"))
	r.start()
	if err := r.svc.Resume(context.Background(), g.ID); err != nil {
		t.Fatal(err)
	}
	g, _ = r.wait(g.ID)
	if g.Status != goal.StatusCompleted {
		t.Fatalf("after two kills: %s: %s", g.Status, g.Report)
	}
	for _, req := range r.srv.ChatRequests() {
		if req.Answer == "unanswered_tool_calls" {
			t.Fatalf("a request carried a tool call without its result: %s", req.Body)
		}
	}
}

// A goal that ended while a call waited for the person's approval (here: the app went away,
// then the person aborted it) and is then re-opened answers that call first ("not run"), as a
// resume repairs the conversation, so its first request is one a real API accepts.
func TestReopenAfterAnInterruptedApprovalAnswersTheCall(t *testing.T) {
	r := newRig(t, llmtest.Script{Replies: []llmtest.Reply{writeDone()}})
	g := r.mustStart(r.spec(func(s *goal.Spec) { s.Policy.Ceiling = tools.ReadOnly }))
	waitStatus(t, r, g.ID, goal.StatusAwaitingApproval, 15*time.Second)
	r.svc.Shutdown()
	r.broker.Shutdown()
	r.start()
	if err := r.svc.Abort(context.Background(), g.ID); err != nil {
		t.Fatal(err)
	}
	r.srv.Push(call(tools.ToolAbortWithReport, map[string]string{"reason": "checked after re-opening", "what_was_learned": "the write was never approved"}))
	if err := r.svc.Reopen(context.Background(), g.ID, "look again"); err != nil {
		t.Fatal(err)
	}
	g, _ = r.wait(g.ID)
	if g.Status != goal.StatusAborted || !strings.Contains(g.Report, "checked after re-opening") {
		t.Fatalf("re-opened goal: %s: %s", g.Status, g.Report)
	}
	last := r.srv.ChatRequests()[len(r.srv.ChatRequests())-1]
	if last.Answer == "unanswered_tool_calls" || !strings.Contains(string(last.Body), "waited for the person's approval") {
		t.Fatalf("the re-opened goal's request: %s\n%s", last.Answer, last.Body)
	}
}

// A goal re-opened the moment it reads as finished, while its run still winds down (its
// OnEnd hooks are slow on a loaded machine), re-opens: the person is not told it "was
// re-opened meanwhile".
func TestReopenRightAfterTheEndWaitsForTheRunToWindDown(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	let := func() { once.Do(func() { close(release) }) }
	r := newRig(t, llmtest.Script{Replies: []llmtest.Reply{writeDone(), claim("done.txt is there")}},
		func(o *goal.Options) { o.OnEnd = func(goal.Goal) { <-release } })
	g := r.mustStart(r.spec())
	t.Cleanup(let) // before the rig's own cleanup, which waits for the run
	waitStatus(t, r, g.ID, goal.StatusCompleted, 15*time.Second)
	r.srv.Push(claim("still there"))
	reopened := make(chan error, 1)
	go func() { reopened <- r.svc.Reopen(context.Background(), g.ID, "check it again") }()
	select {
	case err := <-reopened:
		t.Fatalf("Reopen returned before the first run had ended: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	let()
	if err := <-reopened; err != nil {
		t.Fatalf("re-opening a goal whose run was winding down: %v", err)
	}
	g, _ = r.wait(g.ID)
	if g.Status != goal.StatusCompleted || !strings.Contains(g.Report, "still there") {
		t.Fatalf("re-opened goal: %s: %s", g.Status, g.Report)
	}
}

// failingRepo is the real store, refusing every goal commit once failAfter have been taken
// (a full disk, a broken data dir).
type failingRepo struct {
	*store.Store
	taken, failAfter int
	mu               sync.Mutex
}

func (f *failingRepo) CommitGoal(ctx context.Context, c *goal.Commit) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.taken >= f.failAfter {
		return errors.New("disk I/O error: database or disk is full")
	}
	f.taken++
	return f.Store.CommitGoal(ctx, c)
}

// A goal whose progress the store refuses stops, visibly: Wait (what a fleet's watcher uses)
// returns it failed with the reason, and its end is published, instead of a goal that stays
// "running" forever.
func TestFailedSaveFailsTheRunVisibly(t *testing.T) {
	r := newRig(t, llmtest.Script{Replies: []llmtest.Reply{writeDone(), writeDone(), writeDone(), claim("done")}})
	repo := &failingRepo{Store: r.st, failAfter: 3}
	broker := pubsub.NewBroker[goal.Event]()
	defer broker.Shutdown()
	svc, err := goal.NewService(context.Background(), repo, r.mods, r.reg, broker, goal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Shutdown()
	events := broker.Subscribe(t.Context())
	g, err := svc.Start(context.Background(), r.spec())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	g, err = svc.Wait(ctx, g.ID)
	if err != nil || g.Status != goal.StatusFailed || !strings.Contains(g.Report, "could not be saved") || !strings.Contains(g.Report, "disk is full") {
		t.Fatalf("a goal whose saves fail: %v %s: %s", err, g.Status, g.Report)
	}
	waitEvent(t, events, goal.EventEnded)
	if got, _ := svc.Get(context.Background(), g.ID); got.Status != goal.StatusFailed {
		t.Fatalf("Get says %s", got.Status)
	}
}

// Abort reaches a goal in its final report turn (its wall clock ran out and the model is slow
// to answer): the turn is cut off and Abort returns at once, within the caller's context,
// instead of waiting up to two minutes for the model.
func TestAbortCutsTheFinalTurnAndTakesAContext(t *testing.T) {
	r := newRig(t, llmtest.Script{Replies: []llmtest.Reply{
		call("block", map[string]any{}),
		llmtest.Stalled("Where things stand: ", 3), // the final report never finishes
	}})
	r.reg.Register(tools.New("block", "Wait.", tools.ReadOnly, func(ctx context.Context, _ tools.Call, _ struct{}) (tools.Result, error) {
		<-ctx.Done()
		return tools.Result{}, context.Cause(ctx)
	}))
	events := r.broker.Subscribe(t.Context())
	g := r.mustStart(r.spec(func(s *goal.Spec) { s.Settings.WallClock = goal.Duration(500 * time.Millisecond) }))
	waitEvent(t, events, goal.EventDelta) // the final turn is streaming, and stalls
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- r.svc.Abort(ctx, g.ID) }()
	select {
	case err := <-done:
		if err != nil || time.Since(start) > 8*time.Second {
			t.Fatalf("Abort: %v after %s", err, time.Since(start))
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Abort did not return within its context")
	}
	if g, _ := r.svc.Get(context.Background(), g.ID); g.Status != goal.StatusAborted {
		t.Fatalf("aborted in its final turn: %s", g.Status)
	}
}

// Opening a goal's terminal can be slow (an SSH session, a sandbox on a loaded machine): it
// happens outside the service's lock, so the service answers everyone else meanwhile.
func TestSlowStartHoldsNoServiceLock(t *testing.T) {
	release := make(chan struct{})
	opening := make(chan struct{}, 1)
	r := newRig(t, llmtest.Script{Replies: []llmtest.Reply{claim("done"), claim("done")}},
		func(o *goal.Options) {
			o.OnStart = func(ctx context.Context, g goal.Goal) ([]string, error) {
				if g.Spec.PaneID == "slow-pane" {
					opening <- struct{}{}
					select {
					case <-release:
					case <-ctx.Done():
					}
				}
				return nil, nil
			}
		})
	defer close(release)
	started := make(chan goal.Goal, 1)
	go func() {
		g, _ := r.svc.Start(context.Background(), r.spec(func(s *goal.Spec) { s.PaneID = "slow-pane" }))
		started <- g
	}()
	<-opening
	var slow goal.Goal
	select {
	case slow = <-started:
	case <-time.After(5 * time.Second):
		t.Fatal("Start did not return while its goal's terminal was opening")
	}
	done := make(chan error, 1)
	go func() {
		_, err := r.svc.Start(context.Background(), r.spec(func(s *goal.Spec) { s.PaneID = "other-pane" }))
		if err == nil {
			_, err = r.svc.List(context.Background())
		}
		if err == nil {
			err = r.svc.Steer(context.Background(), slow.ID, "meanwhile")
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the service did not answer while one goal's terminal was opening")
	}
}

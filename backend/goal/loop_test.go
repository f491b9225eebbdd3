package goal_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/goal/criterion"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
	"github.com/clusterspace/clusterspace/backend/tools"
)

// waitFile waits (bounded) until path exists.
func waitFile(t *testing.T, path string) {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return
		}
	}
	t.Fatalf("%s did not appear", path)
}

// A pause while a claim is being verified cuts the check off; on resume the same claim is
// verified again. It is not a failed check: no bounce, no "verification failed" for the model.
func TestPauseDuringVerificationResumesTheVerification(t *testing.T) {
	r := newRig(t, llmtest.Script{Replies: []llmtest.Reply{writeDone(), claim("done.txt is there")}})
	spec := r.spec(func(s *goal.Spec) {
		// The check marks that it started, then takes a while: long enough to pause it.
		s.Criterion = criterion.Spec{Kind: "shell", Command: "echo x >> checks; sleep 2; test -f done.txt"}
	})
	g, err := r.svc.Start(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
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

package fleet_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/engine"
	"github.com/clusterspace/clusterspace/backend/fleet"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

// When the app quits mid-fleet, the fleet is stored interrupted; when the window (or serve)
// opens the data dir again it goes on by itself: the verified task is not redone, the cut-off
// one resumes its goal, and the one behind it runs.
func TestInterruptedFleetGoesOnWhenTheEngineReopens(t *testing.T) {
	q := newQuitter("b-term")
	r := newRig(t, q.behave(func(pane string, turn int, req llmtest.Request) llmtest.Reply {
		return claim(pane + " done")
	}))
	f := r.start(`
name: restart
tasks:
  - {id: a, goal: A, check_shell: "true"}
  - {id: b, goal: B, depends_on: [a], check_shell: "true"}
  - {id: c, goal: C, depends_on: [b], check_shell: "true"}
`)
	q.waitStarted(t, "b")
	before, _ := r.eng.Fleets.Get(context.Background(), f.ID)
	r.close()
	stored, err := readFleet(r.dataDir, f.ID)
	if err != nil || stored.Status != fleet.StatusInterrupted {
		t.Fatalf("after quitting: %s %v", stored.Status, err)
	}
	aRequests := len(r.requests("a-term"))
	q.reopen(r)
	f = r.wait(f.ID)
	if f.Status != fleet.StatusCompleted {
		t.Fatalf("after reopening: %s %+v", f.Status, f.Tasks)
	}
	if n := len(r.requests("a-term")); n != aRequests || taskOf(t, f, "a").GoalID != taskOf(t, before, "a").GoalID {
		t.Fatalf("the verified task a was redone (%d requests, was %d)", n, aRequests)
	}
	if taskOf(t, f, "b").GoalID != taskOf(t, before, "b").GoalID {
		t.Fatal("b got a new goal instead of resuming its own")
	}
	if last := r.requests("b-term"); !strings.Contains(string(last[len(last)-1].Body), "interrupted") {
		t.Error("b's resumed conversation does not say its wait was interrupted")
	}
}

// readFleet reads a fleet from a closed engine's data dir, as `fleet show` does.
func readFleet(dataDir, id string) (fleet.Fleet, error) {
	rd, err := engine.OpenReader(context.Background(), dataDir, "test", slog.New(slog.DiscardHandler))
	if err != nil {
		return fleet.Fleet{}, err
	}
	defer rd.Close()
	return rd.Store.Fleet(context.Background(), id)
}

// A fleet found running when the engine opens (its process crashed, so nobody stored it as
// interrupted) goes on by itself too.
func TestFleetFoundRunningAfterACrashGoesOn(t *testing.T) {
	q := newQuitter()
	r := newRig(t, q.behave(func(pane string, turn int, req llmtest.Request) llmtest.Reply {
		return claim(pane + " done")
	}))
	file, _ := fleet.Parse([]byte("name: crash\ntasks:\n  - {id: a, goal: A, check_shell: \"true\"}\n"))
	f, err := r.eng.Fleets.Create(context.Background(), file, r.spec())
	if err != nil {
		t.Fatal(err)
	}
	q.waitStarted(t, "a")
	r.close()
	// What a crash leaves: the fleet still marked running.
	rd, err := engine.OpenReader(context.Background(), r.dataDir, "test", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	crashed, _ := rd.Store.Fleet(context.Background(), f.ID)
	crashed.Status = fleet.StatusRunning
	if err := rd.Store.SaveFleet(context.Background(), crashed); err != nil {
		t.Fatal(err)
	}
	rd.Close()
	q.reopen(r)
	if f = r.wait(f.ID); f.Status != fleet.StatusCompleted {
		t.Fatalf("after the crash: %s %+v", f.Status, f.Tasks)
	}
}

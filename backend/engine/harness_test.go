package engine

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/goal/criterion"
)

// The setup the engine's tests share.

// openEngine opens an engine on dataDir that logs nowhere (a WithLogger in opts wins),
// failing the test if it cannot. The caller closes it, when its own cleanup order needs.
func openEngine(t testing.TB, dataDir string, opts ...Option) *Engine {
	t.Helper()
	eng, err := Open(context.Background(), dataDir, append([]Option{WithLogger(slog.New(slog.DiscardHandler))}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return eng
}

// must fails the test on err.
func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// waitFor polls ok until it holds, failing the test after a while.
func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second) // Chromium and shells start slowly on a loaded machine
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// testSpec is a goal in pane, working in dir, that no critic interrupts and the person checks
// (criterion manual); a test sets on it the policy and settings it needs.
func testSpec(pane, text, dir string) goal.Spec {
	zero := 0
	return goal.Spec{PaneID: pane, Goal: text, Criterion: criterion.Spec{Kind: "manual"},
		Settings: goal.Settings{CriticInterval: &zero, WorkDir: dir}}
}

// runGoal starts spec and waits, at most d, for it to end; the error is Start's (the goal
// refused) or the wait's.
func runGoal(eng *Engine, spec goal.Spec, d time.Duration) (goal.Goal, error) {
	g, err := eng.Goals.Start(context.Background(), spec)
	if err != nil {
		return g, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return eng.Goals.Wait(ctx, g.ID)
}

// goalSteps is the goal's first n steps, failing the test if they cannot be read.
func goalSteps(t testing.TB, eng *Engine, id string, n int) []goal.Step {
	t.Helper()
	steps, err := eng.Goals.Steps(context.Background(), id, 0, n)
	if err != nil {
		t.Fatal(err)
	}
	return steps
}

// goalHistory is the goal's stored events, failing the test if they cannot be read.
func goalHistory(t testing.TB, eng *Engine, id string) []goal.Event {
	t.Helper()
	events, err := eng.Goals.History(context.Background(), id, 0)
	if err != nil {
		t.Fatal(err)
	}
	return events
}

// markerTemplate writes the pane template "marker" into configDir's templates/: a terminal
// whose command writes "ran" into the file it returns, in dir, then waits.
func markerTemplate(configDir, dir string) string {
	marker := filepath.Join(dir, "ran")
	os.MkdirAll(filepath.Join(configDir, "templates"), 0o755)
	os.WriteFile(filepath.Join(configDir, "templates", "marker.yaml"),
		[]byte("name: Marker\ncommand: sh\nargs: [-c, \"echo ran > "+marker+"; exec sleep 60\"]\n"), 0o644)
	return marker
}

package fleet_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/engine"
	"github.com/clusterspace/clusterspace/backend/fleet"
	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
	"github.com/clusterspace/clusterspace/backend/tools"
)

// A task starts only after the task it depends on verified complete; an independent task
// runs beside the first; the dependant's first prompt carries the dependency's report (the
// claim's rationale and the verification's detail).
func TestFleetRunsInDependencyOrderAndHandsOnTheReport(t *testing.T) {
	r := newRig(t, func(pane string, turn int, req llmtest.Request) llmtest.Reply {
		switch pane {
		case "build-term":
			if turn == 0 {
				return call("write_to_terminal", map[string]string{"pane_id": pane, "text": "mkdir -p dist && echo ok > dist/app"})
			}
			if turn == 1 {
				return call("wait", map[string]int{"ms": 500}) // let the shell finish
			}
			return claim("BUILD-RATIONALE: dist/app written by the build")
		case "test-term":
			return claim("the tests pass against dist/")
		}
		return claim("docs done")
	})
	f := r.run(`
name: release
concurrency: 2
tasks:
  - id: build
    goal: Build the project and write dist/
    pane: build-term
    check_shell: test -s dist/app
  - id: test
    goal: Run the test suite against dist/
    pane: test-term
    depends_on: [build]
    check_shell: test -d dist
  - id: docs
    goal: Write the docs
    pane: docs-term
    check_shell: "true"
`)
	if f.Status != fleet.StatusCompleted {
		t.Fatalf("fleet %s: %+v\nthe build's terminal said: %s", f.Status, f.Tasks, r.requests("build-term")[1].LastToolResult())
	}
	order := r.order()
	first := func(p string) int { return slices.Index(order, p+":0") }
	if first("test-term") < slices.Index(order, "build-term:2") || first("docs-term") > first("test-term") {
		t.Fatalf("request order %v: test must start after build claimed, docs beside build", order)
	}
	build, test := taskOf(t, f, "build"), taskOf(t, f, "test")
	if test.StartedAt.Before(*build.EndedAt) {
		t.Fatalf("test started %v, before build ended %v", test.StartedAt, build.EndedAt)
	}
	bg, _ := r.eng.Goals.Get(context.Background(), build.GoalID)
	tg, _ := r.eng.Goals.Get(context.Background(), test.GoalID)
	t.Logf("handoff: the dependant's goal was created %s after its dependency's goal ended", tg.CreatedAt.Sub(*bg.EndedAt))
	if !strings.Contains(build.Report, "BUILD-RATIONALE") || !strings.Contains(build.Report, "Shell exited 0, as wanted") {
		t.Fatalf("build's report: %q", build.Report)
	}
	body := string(r.requests("test-term")[0].Body)
	for _, want := range []string{"HANDOFF", "Task build", "BUILD-RATIONALE: dist/app written by the build", "Verification: Shell exited 0, as wanted."} {
		if !strings.Contains(body, want) {
			t.Errorf("test's first prompt lacks %q", want)
		}
	}
	if strings.Contains(string(r.requests("docs-term")[0].Body), "HANDOFF") {
		t.Error("docs depends on nothing, yet got a handoff")
	}
	// The task panes were made, in a workspace of the fleet's own.
	for _, p := range []string{"build-term", "test-term", "docs-term"} {
		if !r.eng.Workspaces.HasPane(context.Background(), p) {
			t.Errorf("pane %s was not made", p)
		}
	}
}

// A failed task blocks what depends on it, transitively, with the reason; they never start;
// an independent task still completes; the fleet fails.
func TestFailedDependencyBlocksDependants(t *testing.T) {
	r := newRig(t, func(pane string, turn int, req llmtest.Request) llmtest.Reply {
		if pane == "a-term" {
			return call("abort_with_report", map[string]string{"reason": "the compiler is missing", "what_was_learned": "install gcc"})
		}
		return claim("done")
	})
	f := r.run(`
name: blocked
tasks:
  - {id: a, goal: Build, check_shell: "true"}
  - {id: b, goal: Test, depends_on: [a], check_shell: "true"}
  - {id: c, goal: Ship, depends_on: [b], check_shell: "true"}
  - {id: d, goal: Docs, check_shell: "true"}
`)
	if f.Status != fleet.StatusFailed {
		t.Fatalf("fleet %s, want failed", f.Status)
	}
	want := map[string]fleet.TaskStatus{"a": fleet.TaskAborted, "b": fleet.TaskBlocked, "c": fleet.TaskBlocked, "d": fleet.TaskCompleted}
	for id, st := range want {
		if got := taskOf(t, f, id); got.Status != st {
			t.Errorf("task %s %s, want %s (%s)", id, got.Status, st, got.Reason)
		}
	}
	if b := taskOf(t, f, "b"); !strings.Contains(b.Reason, "task a, which it depends on, aborted") || !strings.Contains(b.Reason, "the compiler is missing") || b.GoalID != "" {
		t.Errorf("b: %+v", b)
	}
	if c := taskOf(t, f, "c"); !strings.Contains(c.Reason, "task b, which it depends on, is blocked") {
		t.Errorf("c: %q", c.Reason)
	}
	if n := len(r.requests("b-term")) + len(r.requests("c-term")); n != 0 {
		t.Errorf("blocked tasks reached the model %d times", n)
	}
}

// share_context reaches the target goal on its next turn, marked as coming from the sender.
func TestShareContextReachesTheNextTurn(t *testing.T) {
	started := make(chan struct{}, 1)
	r := newRig(t, func(pane string, turn int, req llmtest.Request) llmtest.Reply {
		if turn == 0 {
			started <- struct{}{}
			return call("wait", map[string]int{"ms": 1500})
		}
		if strings.Contains(string(req.Body), "SECRET-CONTEXT-42") {
			return claim("got the context")
		}
		return call("abort_with_report", map[string]string{"reason": "no context arrived: " + req.LastUser, "what_was_learned": "-"})
	})
	file, _ := fleet.Parse([]byte("name: share\ntasks:\n  - {id: t, goal: Use what you are told, pane: tgt, check_shell: \"true\"}\n"))
	f, err := r.eng.Fleets.Create(context.Background(), file, r.spec())
	if err != nil {
		t.Fatal(err)
	}
	<-started
	res := r.call(context.Background(), tools.Call{WorkspaceID: "ws-x"}, "share_context", map[string]string{"to_pane_id": "tgt", "context": "SECRET-CONTEXT-42"})
	if res.IsError || !strings.Contains(res.Text, "next turn") {
		t.Fatalf("share_context: %+v", res)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f, _ = r.eng.Fleets.Wait(ctx, f.ID)
	if f.Status != fleet.StatusCompleted {
		t.Fatalf("fleet %s: %+v", f.Status, f.Tasks)
	}
	const shared = "[Context shared by the chat of workspace ws-x]: SECRET-CONTEXT-42"
	if reqs := r.requests("tgt"); strings.Contains(string(reqs[0].Body), shared) || !strings.Contains(string(reqs[1].Body), shared) {
		t.Fatalf("the shared context is not (only) in the second turn")
	}
	// Nobody works in a pane that is not there: a clear error.
	if res := r.call(context.Background(), tools.Call{WorkspaceID: "ws-x"}, "share_context", map[string]string{"to_pane_id": "nobody", "context": "x"}); !res.IsError || !strings.Contains(res.Text, "no agent works in pane nobody") {
		t.Fatalf("share to nobody: %+v", res)
	}
}

// wait_for_agent returns when the target's goal ends, with its report; and a caller aborted
// while waiting stops waiting at once, leaving the target alone.
func TestWaitForAgentReturnsOnEndAndIsCancelledWithItsCaller(t *testing.T) {
	r := newRig(t, func(pane string, turn int, req llmtest.Request) llmtest.Reply {
		switch {
		case pane == "quick" && turn == 0:
			return call("wait", map[string]int{"ms": 800})
		case pane == "quick":
			return claim("QUICK-DONE")
		case pane == "slow":
			return call("wait", map[string]int{"ms": 120000})
		case pane == "boss" && turn == 0:
			return call("wait_for_agent", map[string]any{"pane_id": "slow", "timeout_s": 600})
		}
		return claim("boss done")
	})
	file, _ := fleet.Parse([]byte("name: waits\ntasks:\n  - {id: q, goal: Be quick, pane: quick, check_shell: \"true\"}\n  - {id: s, goal: Be slow, pane: slow, check_shell: \"true\"}\n"))
	f, err := r.eng.Fleets.Create(context.Background(), file, r.spec())
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	res := r.call(context.Background(), tools.Call{WorkspaceID: "ws-x"}, "wait_for_agent", map[string]any{"pane_id": "quick"})
	if res.IsError || !strings.Contains(res.Text, `"status": "completed"`) || !strings.Contains(res.Text, "QUICK-DONE") {
		t.Fatalf("wait_for_agent: %+v", res)
	}
	if d := time.Since(start); d < 500*time.Millisecond {
		t.Fatalf("returned after %s, before the target could end", d)
	}

	// The boss goal waits on the slow one; aborting the boss ends its wait within a second.
	zero := 0
	r.pane("boss")
	boss, err := r.eng.Goals.Start(context.Background(), goal.Spec{PaneID: "boss", Goal: "Wait for slow", Criterion: taskOf(t, f, "q").Criterion,
		Policy: r.spec().Policy, Settings: goal.Settings{CriticInterval: &zero}})
	if err != nil {
		t.Fatal(err)
	}
	r.waitAsked("boss", "slow")
	time.Sleep(300 * time.Millisecond) // the boss is inside wait_for_agent now
	start = time.Now()
	if err := r.eng.Goals.Abort(context.Background(), boss.ID); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("aborting the waiting caller took %s", d)
	}
	if g, _ := r.eng.Goals.Get(context.Background(), boss.ID); g.Status != goal.StatusAborted {
		t.Fatalf("boss %s", g.Status)
	}
	if id, ok := r.eng.Goals.WorkingIn("slow"); !ok || id != taskOf(t, mustGet(t, r, f.ID), "s").GoalID {
		t.Fatal("the slow target stopped with its waiter")
	}
	r.eng.Fleets.Abort(context.Background(), f.ID)
}

func mustGet(t *testing.T, r *rig, id string) fleet.Fleet {
	f, err := r.eng.Fleets.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// assign_task starts a real goal on another pane under the caller's risk ceiling and
// sandbox; the call has no way to ask for more, and the worker's calls above the ceiling are
// refused like any goal's.
func TestAssignTaskCannotRaiseTheCeiling(t *testing.T) {
	r := newRig(t, func(pane string, turn int, req llmtest.Request) llmtest.Reply {
		switch {
		case pane == "boss" && turn == 0:
			return call("assign_task", map[string]any{"pane_id": "worker", "description": "Write a file", "risk": "spends_money"})
		case pane == "boss" && turn == 1:
			return call("assign_task", map[string]any{"pane_id": "worker", "description": "Write a file", "criterion": map[string]any{"check_shell": "true"}})
		case pane == "boss" && turn == 2:
			return call("wait_for_agent", map[string]any{"pane_id": "worker"})
		case pane == "boss":
			return claim("the worker finished")
		case pane == "worker" && turn == 0:
			return call("browser_navigate", map[string]string{"pane_id": "worker", "url": "http://127.0.0.1:9/"})
		}
		return claim("worker done")
	})
	zero := 0
	sandbox := t.TempDir()
	spec := goal.Spec{PaneID: "boss", Goal: "Delegate", Settings: goal.Settings{CriticInterval: &zero}}
	spec.Criterion.Kind, spec.Criterion.Command = "shell", "true"
	spec.Policy.Ceiling, spec.Policy.SandboxDir = tools.WriteLocal, sandbox
	r.pane("boss")
	boss, err := r.eng.Goals.Start(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	g, err := r.eng.Goals.Wait(ctx, boss.ID)
	if err != nil || g.Status != goal.StatusCompleted {
		t.Fatalf("boss %s %v: %s", g.Status, err, g.Report)
	}
	steps, _ := r.eng.Goals.Steps(context.Background(), boss.ID, 0, 10)
	if !steps[0].IsError || !strings.Contains(steps[0].Result, `unknown argument "risk"`) {
		t.Fatalf("assign_task with a risk: %+v", steps[0])
	}
	if !strings.Contains(steps[1].Result, `"risk_ceiling": "write_local"`) || !strings.Contains(steps[1].Result, sandbox) {
		t.Fatalf("assign_task: %s", steps[1].Result)
	}
	if !strings.Contains(steps[2].Result, `"status": "completed"`) {
		t.Fatalf("wait_for_agent: %s", steps[2].Result)
	}
	gs, _ := r.eng.Goals.List(context.Background())
	var worker goal.Goal
	for _, x := range gs {
		if x.Spec.PaneID == "worker" {
			worker = x
		}
	}
	if worker.Spec.Policy.Ceiling != tools.WriteLocal || worker.Spec.Policy.SandboxDir != sandbox {
		t.Fatalf("worker policy %+v", worker.Spec.Policy)
	}
	wsteps, _ := r.eng.Goals.Steps(context.Background(), worker.ID, 0, 10)
	// Refused either way: above the inherited ceiling (asked, and denied here), and, since the
	// worker inherits the sandbox too, as an address on this machine.
	if len(wsteps) == 0 || wsteps[0].Tool != "browser_navigate" || !wsteps[0].IsError ||
		(!strings.Contains(wsteps[0].Result, "denied") && !strings.Contains(wsteps[0].Result, "Refused by the goal's policy")) {
		t.Fatalf("the worker's network call above write_local was not refused: %+v", wsteps)
	}
}

// With a cap of one, tasks run one at a time, the highest priority first, then the oldest;
// get_fleet_status shows the cap and the queue while they wait.
func TestConcurrencyCapAndPriorityQueue(t *testing.T) {
	var mu sync.Mutex
	running, maxRunning := 0, 0
	r := newRig(t, func(pane string, turn int, req llmtest.Request) llmtest.Reply {
		if turn == 0 {
			mu.Lock()
			running++
			maxRunning = max(maxRunning, running)
			mu.Unlock()
			return call("wait", map[string]int{"ms": 200})
		}
		mu.Lock()
		running--
		mu.Unlock()
		return claim(pane + " done")
	})
	f := r.start(`
name: queue
concurrency: 1
tasks:
  - {id: x, goal: X, pane: x-term, check_shell: "true"}
  - {id: y, goal: Y, pane: y-term, priority: 5, check_shell: "true"}
  - {id: z, goal: Z, pane: z-term, check_shell: "true"}
`)
	status := r.call(context.Background(), tools.Call{WorkspaceID: "ws-x"}, "get_fleet_status", map[string]any{"fleet_id": f.ID}).Text
	f = r.wait(f.ID)
	if f.Status != fleet.StatusCompleted {
		t.Fatalf("fleet %s", f.Status)
	}
	var firsts []string
	for _, o := range r.order() {
		if strings.HasSuffix(o, ":0") {
			firsts = append(firsts, strings.TrimSuffix(o, "-term:0"))
		}
	}
	if strings.Join(firsts, ",") != "y,x,z" || maxRunning != 1 {
		t.Fatalf("start order %v (want y,x,z), at most %d at once (want 1)", firsts, maxRunning)
	}
	for _, want := range []string{`"concurrency": 1`, `"running": 1`, `"queue": [` + "\n" + `        "x",` + "\n" + `        "z"`} {
		if !strings.Contains(status, want) {
			t.Errorf("get_fleet_status lacks %q:\n%s", want, status)
		}
	}
}

// Retry runs a failed task again and unblocks what waited behind it: the fleet completes.
func TestRetryUnblocksDependants(t *testing.T) {
	failing, fixed := heldPane("a-term", call("abort_with_report", map[string]string{"reason": "flaky network", "what_was_learned": "-"}))
	r := newRig(t, failing)
	f := r.run("name: retry\ntasks:\n  - {id: a, goal: A, check_shell: \"true\"}\n  - {id: b, goal: B, depends_on: [a], check_shell: \"true\"}\n")
	if f.Status != fleet.StatusFailed || taskOf(t, f, "b").Status != fleet.TaskBlocked {
		t.Fatalf("before retry: %s %+v", f.Status, f.Tasks)
	}
	fixed()
	if _, err := r.eng.Fleets.Retry(context.Background(), f.ID, "b"); err == nil {
		t.Fatal("retrying b alone should say a must be retried (b is blocked by it)")
	}
	if _, err := r.eng.Fleets.Retry(context.Background(), f.ID, "a"); err != nil {
		t.Fatal(err)
	}
	f = r.wait(f.ID)
	if f.Status != fleet.StatusCompleted || taskOf(t, f, "b").Status != fleet.TaskCompleted {
		t.Fatalf("after retry: %s %+v", f.Status, f.Tasks)
	}
}

// create_goal from the chat starts one goal per pane in one fleet the chat owns; a chat has
// no ceiling to inherit, so they run read_only.
func TestCreateGoalStartsOneGoalPerPaneInOneFleet(t *testing.T) {
	r := newRig(t, func(pane string, turn int, req llmtest.Request) llmtest.Reply { return claim(pane + " checked") })
	res := r.call(context.Background(), tools.Call{WorkspaceID: "ws-x"}, "create_goal",
		map[string]any{"description": "Check the disk", "pane_ids": []string{"p1", "p2"}, "criterion": map[string]any{"check_shell": "true"}})
	if res.IsError {
		t.Fatal(res.Text)
	}
	var started []struct{ TaskID, FleetID string }
	if err := json.Unmarshal([]byte(strings.NewReplacer("task_id", "TaskID", "fleet_id", "FleetID").Replace(res.Text)), &started); err != nil || len(started) != 2 || started[0].FleetID != started[1].FleetID {
		t.Fatalf("create_goal: %s", res.Text)
	}
	f := r.wait(started[0].FleetID)
	if f.Status != fleet.StatusCompleted || len(f.Tasks) != 2 || f.Spec.Owner != "chat:ws-x" {
		t.Fatalf("fleet %s %+v", f.Status, f)
	}
	for _, task := range f.Tasks {
		g, _ := r.eng.Goals.Get(context.Background(), task.GoalID)
		if g.Spec.Policy.Ceiling != tools.ReadOnly || g.Status != goal.StatusCompleted {
			t.Errorf("task %s: goal %s under %s", task.ID, g.Status, g.Spec.Policy.Ceiling)
		}
	}
}

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

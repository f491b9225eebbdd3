package fleet_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/fleet"
	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/goal/criterion"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
	"github.com/clusterspace/clusterspace/backend/pubsub"
	"github.com/clusterspace/clusterspace/backend/tools"
)

// One scheduler: a fleet of concurrency 2 under a Goal Runner that runs one goal at a time.
// A task shows running only while its goal runs (never while the goal still queues), one
// task runs at a time, and the queue keeps the fleet's priority and dependencies: b (5), d
// (1), a, then c, which depends on a and carries a's report.
func TestTaskRunsOnlyWhileItsGoalRuns(t *testing.T) {
	var mu sync.Mutex
	var firsts []string // panes in the order their goals first asked the model
	srv := llmtest.New(t, llmtest.Script{Replies: []llmtest.Reply{{Repeat: 1 << 30, Compute: func(req llmtest.Request) llmtest.Reply {
		pane := req.Pane()
		if pane == "" {
			return llmtest.Text("no pane in this request")
		}
		if req.AssistantTurns() > 0 {
			return claim("A-REPORT: " + pane + " is done")
		}
		mu.Lock()
		firsts = append(firsts, pane)
		mu.Unlock()
		return call("hold", map[string]int{"ms": 300}) // long enough for a poll to catch a queued goal
	}}}})
	hold := tools.New("hold", "Waits.", tools.ReadOnly, func(ctx context.Context, c tools.Call, p struct {
		MS int `json:"ms"`
	}) (tools.Result, error) {
		time.Sleep(time.Duration(p.MS) * time.Millisecond)
		return tools.Result{Text: "held"}, nil
	})
	fleetEvents := pubsub.NewBrokerBuffer[fleet.Event](4096)
	goals, fleets := runnerStack(t, srv.OpenAIURL(), goal.Options{MaxConcurrent: 1}, fleetEvents, hold)
	ctx := context.Background()

	// Every task event saying "running" is checked against the goal at once.
	var bad []string
	evCtx, stop := context.WithCancel(ctx)
	defer stop()
	evs := fleetEvents.Subscribe(evCtx)
	checked := make(chan struct{})
	go func() {
		defer close(checked)
		for ev := range evs {
			e := ev.Payload
			if e.Type != fleet.EventTask || e.Status != string(fleet.TaskRunning) {
				continue
			}
			if why := goalNotRunning(goals, e.Pane, e.GoalID); why != "" {
				mu.Lock()
				bad = append(bad, fmt.Sprintf("event: task %s running while %s", e.TaskID, why))
				mu.Unlock()
			}
		}
	}()

	file := fleet.File{Name: "one-scheduler", Concurrency: 2}
	for _, ts := range []struct {
		id, deps string
		prio     int
	}{{"a", "", 0}, {"b", "", 5}, {"c", "a", 0}, {"d", "", 1}} {
		task := fleet.TaskSpec{ID: ts.id, Goal: "Do " + ts.id, Pane: ts.id + "-term", Priority: ts.prio,
			Criterion: criterion.Spec{Kind: criterion.KindShell, Command: "true"}}
		if ts.deps != "" {
			task.DependsOn = []string{ts.deps}
		}
		file.Tasks = append(file.Tasks, task)
	}
	off := 0
	f, err := fleets.Create(ctx, file, fleet.Spec{Settings: goal.Settings{CriticInterval: &off, WorkDir: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	// Polled as well: at most one task runs (the Goal Runner's limit), and only with its goal.
	deadline := time.Now().Add(60 * time.Second)
	for {
		cur, err := fleets.Get(ctx, f.ID)
		if err != nil {
			t.Fatal(err)
		}
		running := 0
		mu.Lock()
		for _, task := range cur.Tasks {
			if task.Status != fleet.TaskRunning {
				continue
			}
			running++
			if why := goalNotRunning(goals, task.Pane, task.GoalID); why != "" {
				bad = append(bad, fmt.Sprintf("poll: task %s running while %s", task.ID, why))
			}
		}
		if running > 1 {
			bad = append(bad, fmt.Sprintf("poll: %d tasks running under a Goal Runner limit of 1", running))
		}
		mu.Unlock()
		if cur.Status.Finished() {
			f = cur
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the fleet did not end: %+v", cur.Tasks)
		}
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	<-checked
	mu.Lock()
	defer mu.Unlock()
	if len(bad) > 0 {
		t.Errorf("%d wrong states, the first: %s", len(bad), strings.Join(bad[:min(5, len(bad))], "\n"))
	}
	if f.Status != fleet.StatusCompleted {
		t.Fatalf("fleet %s: %+v", f.Status, f.Tasks)
	}
	if want := []string{"b-term", "d-term", "a-term", "c-term"}; !slices.Equal(firsts, want) {
		t.Errorf("start order %v, want %v (priority, then the dependency)", firsts, want)
	}
	c, _ := f.Task("c")
	g, err := goals.Get(ctx, c.GoalID)
	if err != nil || !strings.Contains(g.Spec.Handoff, "A-REPORT: a-term is done") || !slices.Contains(g.Spec.DependsOn, taskGoal(f, "a")) {
		t.Errorf("c's goal: hand-off %q, depends on %v (a's goal is %s): %v", g.Spec.Handoff, g.Spec.DependsOn, taskGoal(f, "a"), err)
	}
}

// goalNotRunning says why a task's goal is not running now ("" when it runs or has ended).
func goalNotRunning(goals *goal.Service, pane, goalID string) string {
	if goalID == "" {
		return "it has no goal"
	}
	if id, ok := goals.WorkingIn(pane); ok && id == goalID {
		return ""
	}
	g, err := goals.Get(context.Background(), goalID)
	switch {
	case err != nil:
		return "its goal is unknown: " + err.Error()
	case g.Status == goal.StatusPending:
		return "its goal " + goalID + " is still queued"
	}
	return ""
}

func taskGoal(f fleet.Fleet, id string) string {
	t, _ := f.Task(id)
	return t.GoalID
}

// benchFleets is the fleet service over a real store and Goal Runner whose model is the
// scripted server over HTTP: each goal calls the no-op tool steps times, then claims. No
// panes or terminals: what is measured is the scheduler and the runner.
func benchFleets(b *testing.B, steps, maxGoals int) *fleet.Service {
	b.Helper()
	srv := llmtest.New(b, llmtest.Script{Replies: []llmtest.Reply{{Repeat: 1 << 30, Compute: func(req llmtest.Request) llmtest.Reply {
		if turn := req.AssistantTurns(); turn < steps {
			return call("noop", map[string]int{"i": turn})
		}
		return claim("done")
	}}}})
	noop := tools.New("noop", "Does nothing.", tools.ReadOnly, func(ctx context.Context, c tools.Call, p struct {
		I int `json:"i"`
	}) (tools.Result, error) {
		return tools.Result{Text: fmt.Sprint("ok ", p.I)}, nil
	})
	_, fleets := runnerStack(b, srv.OpenAIURL(), goal.Options{MaxConcurrent: fleet.MaxConcurrency, MaxGoals: maxGoals}, pubsub.NewBroker[fleet.Event](), noop)
	return fleets
}

// runBenchFleet runs a fleet of n independent tasks, at most concurrency at once, and
// returns its wall time.
func runBenchFleet(b *testing.B, s *fleet.Service, n, concurrency int) time.Duration {
	b.Helper()
	file := fleet.File{Name: "bench", Concurrency: concurrency}
	for i := range n {
		file.Tasks = append(file.Tasks, fleet.TaskSpec{ID: fmt.Sprintf("t%03d", i), Goal: "count", Pane: fmt.Sprintf("p%03d", i),
			Criterion: criterion.Spec{Kind: criterion.KindShell, Command: "true"}})
	}
	off := 0
	start := time.Now()
	f, err := s.Create(context.Background(), file, fleet.Spec{Concurrency: concurrency, Settings: goal.Settings{CriticInterval: &off, WorkDir: b.TempDir()}})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	f, err = s.Wait(ctx, f.ID)
	if err != nil || f.Status != fleet.StatusCompleted {
		b.Fatalf("fleet %s: %v %+v", f.Status, err, f.Counts())
	}
	return time.Since(start)
}

// BenchmarkSchedulerOverhead100: 100 tasks queued behind a cap of 4, each a real goal of one
// claim against the scripted model. Reported per task: the scheduler's own time (queue,
// store writes, handoff: what it does under its lock from a task's end to the next start),
// the Goal Runner's Start of the task's goal (under the same lock; a lone goal pays it too),
// and the wall time for scale.
func BenchmarkSchedulerOverhead100(b *testing.B) {
	const tasks = 100
	for range b.N {
		s := benchFleets(b, 0, 2*tasks)
		wall := runBenchFleet(b, s, tasks, 4)
		own, goalStart := s.SchedulerTime()
		b.ReportMetric(float64(own.Microseconds())/1000/tasks, "ms-sched/task")
		b.ReportMetric(float64(goalStart.Microseconds())/1000/tasks, "ms-goalstart/task")
		b.ReportMetric(float64(wall.Microseconds())/1000/tasks, "ms-wall/task")
	}
}

// BenchmarkFleet20GoalsPerStep: a fleet of 20 tasks running at once, 25 no-op steps each,
// against a fleet of one such task in the same run. Reported: µs per step of work (wall time
// over all steps) and its ratio to the single task's, the figure the issue caps at 2; and the
// same ratio in CPU time of this process (runner, store, scripted server), which other
// programs sharing the machine do not skew.
func BenchmarkFleet20GoalsPerStep(b *testing.B) {
	const steps = 25
	for range b.N {
		s1 := benchFleets(b, steps, 50)
		cpu := cpuTime()
		one := runBenchFleet(b, s1, 1, 1)
		cpu1 := cpuTime() - cpu
		s20 := benchFleets(b, steps, 50)
		cpu = cpuTime()
		twenty := runBenchFleet(b, s20, 20, 20)
		cpu20 := cpuTime() - cpu
		per1 := float64(one.Microseconds()) / steps
		per20 := float64(twenty.Microseconds()) / (20 * steps)
		b.ReportMetric(per20, "µs/step")
		b.ReportMetric(per20/per1, "ratio-to-single")
		b.ReportMetric((float64(cpu20)/(20*steps))/(float64(cpu1)/steps), "cpu-ratio-to-single")
	}
}

// cpuTime is the CPU time this process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

package fleet_test

import (
	"context"
	"fmt"
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

// benchFleets is the fleet service over a real store and Goal Runner whose model is the
// scripted server over HTTP: each goal calls the no-op tool steps times, then claims. No
// panes or terminals: what is measured is the scheduler and the runner.
func benchFleets(b *testing.B, steps, maxGoals int) *fleet.Service {
	b.Helper()
	srv := llmtest.New(b, llmtest.Script{Replies: []llmtest.Reply{{Repeat: 1 << 30, Compute: func(req llmtest.Request) llmtest.Reply {
		if turn := assistantTurns(req); turn < steps {
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

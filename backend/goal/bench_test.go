package goal_test

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/goal/criterion"
	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/pubsub"
	"github.com/clusterspace/clusterspace/backend/store"
	"github.com/clusterspace/clusterspace/backend/tools"
)

// instantModel answers every turn at once with one call to the no-op tool; after the step
// cap it answers the final turn with text. It stands in for the model only, so what the
// benchmark measures is the runner: guard, policy, store commits, events.
type instantModel struct{ n atomic.Int64 }

func (m *instantModel) Stream(ctx context.Context, req llm.Request) (*llm.Stream, error) {
	var events []llm.Event
	if len(req.Tools) == 0 {
		events = []llm.Event{{Kind: llm.EventText, Text: "final"}, {Kind: llm.EventFinish, Finish: llm.FinishStop}}
	} else {
		id := fmt.Sprintf("call-%d", m.n.Add(1))
		call := llm.ToolCall{ID: id, Name: "noop", Args: []byte(fmt.Sprintf(`{"i":%d}`, m.n.Load()))}
		events = []llm.Event{{Kind: llm.EventToolCallStart, ToolCall: call}, {Kind: llm.EventToolCallEnd, ToolCall: call},
			{Kind: llm.EventUsage, Usage: llm.Usage{InputTokens: 10, OutputTokens: 5}}, {Kind: llm.EventFinish, Finish: llm.FinishToolCalls}}
	}
	i := 0
	return llm.NewStream(llm.StreamInfo{Model: "instant"}, func() (llm.Event, error) {
		if i == len(events) {
			return llm.Event{}, io.EOF
		}
		i++
		return events[i-1], nil
	}, func() error { return nil }), nil
}

func (m *instantModel) Complete(ctx context.Context, req llm.Request) (llm.Reply, error) {
	return llm.Reply{Message: llm.AssistantText("PROGRESSING\nfine")}, nil
}

func (m *instantModel) ListModels(ctx context.Context) ([]llm.ModelInfo, error) { return nil, nil }

const benchSteps = 500

// runGoals runs n goals of benchSteps no-op steps each, concurrently, on one store, and
// returns the wall time.
func runGoals(b *testing.B, n int) time.Duration {
	return runBench(b, benchRun{goals: n, steps: benchSteps, model: agent.Model{Provider: &instantModel{}, ModelID: "instant"}})
}

// benchRun is one benchmark run: how many goals at once, of how many steps, on which model;
// tick, if set, is called as each step's tool runs (with its argument, the step number).
type benchRun struct {
	goals, steps int
	model        agent.Model
	tick         func(step int)
	// risk is the no-op tool's (default read_only): a step that changes something stores its
	// reply before the call runs, one commit more.
	risk tools.Risk
}

func runBench(b *testing.B, r benchRun) time.Duration {
	n, steps := r.goals, r.steps
	dir := b.TempDir()
	st, err := store.Open(context.Background(), filepath.Join(dir, store.FileName))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	reg := tools.NewRegistry()
	reg.Register(tools.GoalTools()...)
	reg.Register(tools.New("noop", "Does nothing.", r.risk, func(ctx context.Context, c tools.Call, p struct {
		I int `json:"i"`
	}) (tools.Result, error) {
		if r.tick != nil {
			r.tick(p.I)
		}
		return tools.Result{Text: fmt.Sprint("ok ", p.I)}, nil
	}))
	broker := pubsub.NewBroker[goal.Event]()
	defer broker.Shutdown()
	svc, err := goal.NewService(context.Background(), st, models{r.model}, reg, broker,
		goal.Options{MaxConcurrent: n, MaxGoals: n + 10})
	if err != nil {
		b.Fatal(err)
	}
	defer svc.Shutdown()
	off := 0
	spec := goal.Spec{PaneID: "p", Goal: "count", Criterion: criterion.Spec{Kind: "manual"},
		Settings: goal.Settings{MaxSteps: steps, CriticInterval: &off, WorkDir: dir}}
	spec.Policy.Ceiling = r.risk
	start := time.Now()
	var ids []string
	for range n {
		g, err := svc.Start(context.Background(), spec)
		if err != nil {
			b.Fatal(err)
		}
		ids = append(ids, g.ID)
	}
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g, err := svc.Wait(context.Background(), id)
			if err != nil || g.State.Steps != steps {
				b.Errorf("goal %s: %v, %d steps", id, err, g.State.Steps)
			}
		}()
	}
	wg.Wait()
	return time.Since(start)
}

// BenchmarkRunnerOverheadPerWriteStep: as BenchmarkRunnerOverheadPerStep, with a no-op tool
// declared write_local, whose reply is stored before it runs.
func BenchmarkRunnerOverheadPerWriteStep(b *testing.B) {
	for range b.N {
		d := runBench(b, benchRun{goals: 1, steps: benchSteps, risk: tools.WriteLocal, model: agent.Model{Provider: &instantModel{}, ModelID: "instant"}})
		b.ReportMetric(float64(d.Microseconds())/benchSteps, "µs/step")
	}
}

// BenchmarkRunnerOverheadPerStep: one goal, 500 steps, instant model, no-op tool.
// Reported: µs per step (all of it runner overhead, store commits included).
func BenchmarkRunnerOverheadPerStep(b *testing.B) {
	for range b.N {
		d := runGoals(b, 1)
		b.ReportMetric(float64(d.Microseconds())/benchSteps, "µs/step")
	}
}

// BenchmarkRunnerConcurrent20: twenty goals at once. Reported: µs per step of work (wall
// time over all 20×500 steps) and the ratio to a single goal's per-step cost measured in the
// same run, the figure the issue caps at 2.
func BenchmarkRunnerConcurrent20(b *testing.B) {
	for range b.N {
		single := runGoals(b, 1)
		twenty := runGoals(b, 20)
		perStep1 := float64(single.Microseconds()) / benchSteps
		perStep20 := float64(twenty.Microseconds()) / (20 * benchSteps)
		b.ReportMetric(perStep20, "µs/step")
		b.ReportMetric(perStep20/perStep1, "ratio-to-single")
	}
}

// Step-cost growth: the steps compared, at the start and at the end of a 3,000-step goal.
const (
	growthSteps  = 3000
	growthSample = 100
)

// BenchmarkStepCostGrowth: one goal of 3,000 no-op steps with the instant model, whose window
// is known (so every turn is also fitted to it, as with a real model), timed step by step as
// its tool runs. Reported: the median µs of a step over steps 1–100 and 2,900–3,000, and their
// ratio — what a step costs must not grow with the length of the goal.
func BenchmarkStepCostGrowth(b *testing.B) {
	for range b.N {
		at := make([]time.Time, growthSteps+1)
		runBench(b, benchRun{goals: 1, steps: growthSteps, tick: func(step int) {
			if step <= growthSteps {
				at[step] = time.Now()
			}
		},
			model: agent.Model{Provider: &instantModel{}, ModelID: "instant", Window: 1 << 20}})
		// A window's cost is its median step: one SQLite checkpoint or GC pause lands in some
		// windows and not others, and would swing a 100-step total by a fifth either way.
		median := func(from int) float64 {
			d := make([]float64, growthSample)
			for i := range d {
				d[i] = float64(at[from+i+1].Sub(at[from+i]).Nanoseconds()) / 1e3
			}
			slices.Sort(d)
			return (d[growthSample/2-1] + d[growthSample/2]) / 2
		}
		early, late := median(1), median(growthSteps-growthSample)
		b.ReportMetric(early, "µs/step-early")
		b.ReportMetric(late, "µs/step-late")
		b.ReportMetric(late/early, "late/early")
	}
}

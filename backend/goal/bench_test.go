package goal_test

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/goal/criterion"
	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
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

// What offering tools by need saves a long goal that needs only a shell: the probe goal of
// the caching benchmark, run over the app's registry with every tool offered (as before) and
// by need.

// offerFigures are one run's means per goal request.
type offerFigures struct {
	toolBytes          int     // of the tool definitions, as sent
	input, uncached    float64 // input tokens, and those the simulated cache did not serve
	cost               float64 // of the whole run, with cache prices
	tools, repeatShare float64
}

// probeRegistries are the app's registry with the probe tool, by need (find_tools in it) and
// with everything offered (the same tools but find_tools: nothing could be found, so
// everything is sent, as before).
func probeRegistries(tb testing.TB) (byNeed, all *tools.Registry) {
	byNeed, _ = engineTools(tb)
	byNeed.Register(probeTool())
	all = tools.NewRegistry()
	for _, n := range byNeed.Names() {
		if n != tools.ToolFindTools {
			t, _ := byNeed.Get(n)
			all.Register(t)
		}
	}
	return byNeed, all
}

func measureOffer(tb testing.TB, kind string, n int, reg *tools.Registry) offerFigures {
	r := newLongRigWith(tb, kind, llmtest.Script{Replies: probeSteps(n), ForgetBodies: true}, reg)
	if g, _ := r.run(nil); g.Status != goal.StatusCompleted || g.State.Steps != n {
		tb.Fatalf("status %s after %d steps: %s", g.Status, g.State.Steps, g.Report)
	}
	main := answered(r.mainRequests())
	var f offerFigures
	names, size := toolsSent(tb, main[len(main)-1]) // the newest keeps its body
	f.toolBytes, f.tools = size, float64(len(names))
	repeated, total := 0, 0
	for i, q := range main {
		f.input += float64(q.Usage.Input)
		f.uncached += float64(q.Usage.Input - q.Usage.Cached)
		f.cost += llm.Cost(llm.Usage{InputTokens: q.Usage.Input, OutputTokens: q.Usage.Output, CachedInputTokens: q.Usage.Cached, CacheWriteTokens: q.Usage.CacheWrite}, longPrice)
		if i > 0 {
			_, common := llmtest.CommonPrefix(main[i-1], q)
			repeated, total = repeated+common, total+q.PrefixBytes()
		}
	}
	f.input /= float64(len(main))
	f.uncached /= float64(len(main))
	f.repeatShare = float64(repeated) / float64(total)
	return f
}

// BenchmarkLongGoalToolsByNeed: the 300-step probe goal per wire format over the app's
// registry, every tool offered and by need. Reported per goal request: tools and bytes of
// tool definitions, input tokens and uncached input tokens (means), and the run's cost by
// need over its cost with every tool.
func BenchmarkLongGoalToolsByNeed(b *testing.B) {
	for _, kind := range wireFormats {
		b.Run(kind, func(b *testing.B) {
			for range b.N {
				byNeed, all := probeRegistries(b)
				before, after := measureOffer(b, kind, 300, all), measureOffer(b, kind, 300, byNeed)
				b.ReportMetric(before.tools, "tools-all")
				b.ReportMetric(after.tools, "tools-byneed")
				b.ReportMetric(float64(before.toolBytes), "toolB-all")
				b.ReportMetric(float64(after.toolBytes), "toolB-byneed")
				b.ReportMetric(before.input, "in-tok/req-all")
				b.ReportMetric(after.input, "in-tok/req-byneed")
				b.ReportMetric(before.uncached, "uncached/req-all")
				b.ReportMetric(after.uncached, "uncached/req-byneed")
				b.ReportMetric(after.cost/before.cost, "cost-byneed/all")
				b.ReportMetric(100*after.repeatShare, "%repeat-byneed")
			}
		})
	}
}

// BenchmarkRequestToolsByNeed: what building a goal's request costs with every tool offered
// and by need, over the app's registry, in a conversation that grows by a step per request
// to 300 steps. Reported: µs per request. By need adds reading the new messages for
// find_tools' results and, while the browser tools are not offered, a look at the
// workspace's panes (here a stand-in; in the app the read the per-turn pane summary makes).
func BenchmarkRequestToolsByNeed(b *testing.B) {
	byNeed, all := probeRegistries(b)
	for _, c := range []struct {
		name   string
		reg    *tools.Registry
		byNeed bool
	}{{"all", all, false}, {"byneed", byNeed, true}} {
		b.Run(c.name, func(b *testing.B) {
			const steps = 300
			for range b.N {
				a := &agent.Agent{ByNeed: c.byNeed, Registry: c.reg, PaneID: "p", Model: agent.Model{MaxTokens: 1024}}
				conv := []llm.Message{llm.UserText(longGoalText)}
				for i := range steps {
					tc := llm.ToolCall{ID: fmt.Sprintf("c%d", i), Name: "probe", Args: []byte(fmt.Sprintf(`{"i":%d}`, i))}
					conv = append(conv, llm.AssistantMessage(llm.ToolCallPart(tc)), llm.ToolMessage(llm.ToolResult{CallID: tc.ID, Name: tc.Name, Text: probeOutput(i)}))
					a.Request(agent.Turn{System: "s", Messages: conv})
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*steps), "µs/request")
		})
	}
}

// The figures of a long scripted goal, from the scripted server's request log and the usage
// its simulated prompt cache reported.
type cacheFigures struct {
	// repeat is the share of the input of steps 2…n that repeats the previous request's
	// prefix, over the run; minRepeat the smallest share of one step from step 10 on (early
	// requests are small, so one new tool result is a larger share of them).
	repeat, minRepeat float64
	// uncached10 and uncachedLast are the input tokens not served by the cache at step 10
	// and at the last step.
	uncached10, uncachedLast int
	// costRatio is the computed input-and-output cost with the cache prices over the same
	// run priced as if nothing were cached.
	costRatio float64
	perStep   time.Duration
}

// measureCaching runs an n-step probe goal on one wire format and measures it.
func measureCaching(tb testing.TB, kind string, n int) cacheFigures {
	r := newLongRig(tb, kind, llmtest.Script{Replies: probeSteps(n), ForgetBodies: true})
	start := time.Now()
	g, _ := r.run(nil)
	elapsed := time.Since(start)
	if g.Status != goal.StatusCompleted || g.State.Steps != n {
		tb.Fatalf("status %s after %d steps: %s", g.Status, g.State.Steps, g.Report)
	}
	main := answered(r.mainRequests())
	if len(main) != n {
		tb.Fatalf("%d requests for %d steps", len(main), n)
	}
	f := cacheFigures{minRepeat: 1, perStep: elapsed / time.Duration(n)}
	var with, without float64
	repeated, total := 0, 0
	for i, q := range main {
		if i > 0 {
			_, common := llmtest.CommonPrefix(main[i-1], q)
			repeated, total = repeated+common, total+q.PrefixBytes()
			if i >= 9 {
				f.minRepeat = min(f.minRepeat, float64(common)/float64(q.PrefixBytes()))
			}
		}
		u := llm.Usage{InputTokens: q.Usage.Input, OutputTokens: q.Usage.Output, CachedInputTokens: q.Usage.Cached, CacheWriteTokens: q.Usage.CacheWrite}
		with += llm.Cost(u, longPrice)
		without += llm.Cost(llm.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens}, longPrice)
	}
	f.repeat = float64(repeated) / float64(total)
	uncached := func(q llmtest.Request) int { return q.Usage.Input - q.Usage.Cached }
	f.uncached10, f.uncachedLast = uncached(main[9]), uncached(main[n-1])
	f.costRatio = with / without
	return f
}

// The figures for a 300-step goal on each wire format: at least 95% of the input
// repeats the previous request's prefix, the uncached input per step stays
// flat (step 300 ≤ 1.2 × step 10), and the cached run costs at most a quarter of the same run
// without the cache.
func TestLongGoalCacheFigures(t *testing.T) {
	t.Parallel()
	for _, kind := range wireFormats {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			steps := 300
			if raceDetector {
				steps = 120
			}
			f := measureCaching(t, kind, steps)
			t.Logf("%d steps, %s: repeat %.3f (lowest step from 10 on %.3f), uncached step 10 %d, last step %d, cost ratio %.3f", steps, kind, f.repeat, f.minRepeat, f.uncached10, f.uncachedLast, f.costRatio)
			if f.repeat < 0.95 {
				t.Errorf("only %.1f%% of the input repeated the previous request's prefix, want ≥ 95%%", 100*f.repeat)
			}
			if f.minRepeat < 0.9 {
				t.Errorf("a request from step 10 on repeated only %.1f%% of the previous one", 100*f.minRepeat)
			}
			if float64(f.uncachedLast) > 1.2*float64(f.uncached10) {
				t.Errorf("uncached input grew from %d tokens at step 10 to %d at step %d (more than 1.2×)", f.uncached10, f.uncachedLast, steps)
			}
			if f.costRatio > 0.25 {
				t.Errorf("with the cache the run costs %.2f× the uncached run, want ≤ 0.25×", f.costRatio)
			}
		})
	}
}

// BenchmarkLongGoalCaching: a 300-step scripted goal per wire format. Reported: the share of
// the input repeating the previous request's prefix (over the run, and the lowest step), uncached input at step 300 over
// step 10, cost with the cache over cost without, and ms per step end to end.
func BenchmarkLongGoalCaching(b *testing.B) {
	for _, kind := range wireFormats {
		b.Run(kind, func(b *testing.B) {
			for range b.N {
				f := measureCaching(b, kind, 300)
				b.ReportMetric(100*f.repeat, "%repeat")
				b.ReportMetric(100*f.minRepeat, "%repeat-min-step")
				b.ReportMetric(float64(f.uncachedLast)/float64(f.uncached10), "uncached-300/10")
				b.ReportMetric(f.costRatio, "cost-ratio")
				b.ReportMetric(float64(f.perStep.Microseconds())/1000, "ms/step")
			}
		})
	}
}

// smallWindow is the 3,000-step benchmark's context window, in tokens.
const smallWindow = 8000

// BenchmarkLongGoalSmallWindow: a 3,000-step goal on a model with an 8,000-token window,
// against a server that refuses anything longer. It fails if any request was refused or
// the last one no longer names the goal and its criterion. Reported: the largest request
// over the window, compactions, and ms per step for the first and the last 300 steps.
func BenchmarkLongGoalSmallWindow(b *testing.B) {
	for range b.N {
		const n = 3000
		r := newLongRig(b, llm.KindOpenAI, llmtest.Script{Replies: probeSteps(n), Roles: []llmtest.Role{summaryRole()}, ContextLimit: smallWindow, ForgetBodies: true})
		g, evs := r.run(func(s *goal.Settings) { s.ContextWindow = smallWindow })
		if g.Status != goal.StatusCompleted || g.State.Steps != n {
			b.Fatalf("status %s after %d steps: %s", g.Status, g.State.Steps, g.Report)
		}
		largest := 0
		for _, q := range r.mainRequests() {
			if q.Usage == nil {
				b.Fatalf("a request was refused (%s): the window was exceeded", q.Answer)
			}
			largest = max(largest, q.Usage.Input)
		}
		b.ReportMetric(float64(largest)/smallWindow, "max-request/window")
		b.ReportMetric(float64(len(findEvents(evs, goal.EventCompaction))), "compactions")
		main := answered(r.mainRequests())
		b.ReportMetric(stepMillis(main[:301]), "ms/step-first-300")
		b.ReportMetric(stepMillis(main[len(main)-301:]), "ms/step-last-300")
		if !lastRequestNamesGoal(r) {
			b.Fatal("the last request no longer names the goal and its criterion")
		}
	}
}

// stepMillis is the mean wall time from one goal request to the next over reqs (a step:
// the model turn, the tool, the store, compactions).
func stepMillis(reqs []llmtest.Request) float64 {
	span := reqs[len(reqs)-1].At.Sub(reqs[0].At)
	return float64(span.Microseconds()) / 1000 / float64(len(reqs)-1)
}

// lastRequestNamesGoal: the log keeps the newest request's body even when it forgets the rest.
func lastRequestNamesGoal(r *longRig) bool {
	reqs := r.srv.ChatRequests()
	body := string(reqs[len(reqs)-1].Body)
	return strings.Contains(body, "GOAL: "+longGoalText) && strings.Contains(body, "SUCCESS CRITERION: the shell command `"+longCriterion+"`")
}

package goal_test

import (
	"strings"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

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

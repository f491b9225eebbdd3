package goal_test

import (
	"fmt"
	"testing"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
	"github.com/clusterspace/clusterspace/backend/tools"
)

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

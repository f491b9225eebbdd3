package goal_test

import (
	"math"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

var wireFormats = []string{llm.KindOpenAI, llm.KindAnthropic}

// Every request of a goal repeats the one before it byte for byte, except the per-turn
// context message at its end, and carries what the provider's prompt cache needs: the goal's
// id as prompt_cache_key (OpenAI-compatible), cache_control on the tools, the system prompt
// and the newest stable message (Anthropic). The critic's requests carry them too. The
// server's simulated cache then serves most of each request's input.
func TestGoalRequestsAreCacheFriendly(t *testing.T) {
	t.Parallel()
	for _, kind := range wireFormats {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			r := newLongRig(t, kind, llmtest.Script{Replies: probeSteps(40), Roles: []llmtest.Role{criticSays("PROGRESSING\nfine")}})
			g, _ := r.run(func(s *goal.Settings) { every := 5; s.CriticInterval = &every })
			if g.Status != goal.StatusCompleted {
				t.Fatalf("status %s: %s", g.Status, g.Report)
			}
			main := r.mainRequests()
			if len(main) != 40 {
				t.Fatalf("%d goal requests, want 40", len(main))
			}
			for i, q := range main {
				checkMarkers(t, kind, g.ID, q, 3)
				if i == 0 {
					continue
				}
				prev := main[i-1]
				segs, _ := llmtest.CommonPrefix(prev, q)
				if segs < prev.Segments()-1 {
					t.Fatalf("request %d repeats %d of the previous request's %d segments: the prefix changed", i, segs, prev.Segments())
				}
			}
			critics := 0
			for _, q := range r.srv.ChatRequests() {
				if strings.Contains(q.System, "You are a critic") {
					critics++
					checkMarkers(t, kind, g.ID, q, 2)
				}
			}
			if critics == 0 {
				t.Fatal("the critic was never asked")
			}
			last := main[len(main)-1].Usage
			if last.Cached*10 < last.Input*8 {
				t.Fatalf("the last request's input was %d tokens, only %d of them from the cache", last.Input, last.Cached)
			}
			if g.State.Usage.CachedInputTokens == 0 {
				t.Fatal("the goal's usage counts no cached input")
			}
		})
	}
}

// checkMarkers checks a request's cache key (OpenAI-compatible) or breakpoints (Anthropic).
func checkMarkers(t *testing.T, kind, goalID string, q llmtest.Request, breakpoints int) {
	t.Helper()
	if kind == llm.KindOpenAI {
		if q.CacheKey != goalID {
			t.Fatalf("request %s carries prompt_cache_key %q, want the goal's id %q", q.Answer, q.CacheKey, goalID)
		}
		return
	}
	if n := q.Breakpoints(); n != breakpoints || n > 4 {
		t.Fatalf("request %s carries %d cache_control breakpoints, want %d (at most 4)", q.Answer, n, breakpoints)
	}
}

// The goal's cost with cached tokens reported by the server is what a person computes by
// hand from the price table: uncached input, cache reads, cache writes and output each at
// their own price.
func TestCostWithCachedTokensMatchesHandComputed(t *testing.T) {
	t.Parallel()
	for _, kind := range wireFormats {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			// OpenAI reports no cache writes: its writes cost the input price.
			u := &llmtest.Usage{Input: 10_000, Output: 100, Cached: 8_000}
			write, writePrice := 0, 0.0
			if kind == llm.KindAnthropic {
				u.CacheWrite, write, writePrice = 1_000, 1_000, 3.75
			}
			replies := probeSteps(5)
			for i := range replies {
				replies[i].Usage = u
			}
			r := newLongRig(t, kind, llmtest.Script{Replies: replies})
			g, _ := r.run(nil)
			if g.Status != goal.StatusCompleted {
				t.Fatalf("status %s: %s", g.Status, g.Report)
			}
			// Per turn: the uncached rest × $3 + 8,000 cached × $0.30 + 1,000 written × $3.75
			// (Anthropic only) + 100 out × $15, per million.
			perTurn := (float64(10_000-8_000-write)*3 + 8_000*0.3 + float64(write)*writePrice + 100*15) / 1e6
			want := 5 * perTurn
			if math.Abs(g.State.CostUSD-want) > 1e-9 {
				t.Fatalf("cost %.6f USD, hand-computed %.6f", g.State.CostUSD, want)
			}
			if got := g.State.Usage; got.InputTokens != 50_000 || got.CachedInputTokens != 40_000 || got.CacheWriteTokens != 5*write {
				t.Fatalf("usage %+v", got)
			}
			full := llm.Cost(llm.Usage{InputTokens: 50_000, OutputTokens: 500}, llm.Price{InputPerMTok: 3, OutputPerMTok: 15})
			if g.State.CostUSD >= full/2 {
				t.Fatalf("cost %.6f is not well under the uncached %.6f", g.State.CostUSD, full)
			}
		})
	}
}

// A budget in dollars counts cached input at the cached price: a goal whose turns cost
// $0.19 each with the cache ($1 without) reaches a $0.50 budget after its third turn, not
// its first.
func TestBudgetUSDHonoursTheCachedPrice(t *testing.T) {
	t.Parallel()
	u := &llmtest.Usage{Input: 100_000, Cached: 90_000}
	replies := probeSteps(10)
	for i := range replies {
		replies[i].Usage = u
	}
	r := newLongRig(t, llm.KindOpenAI, llmtest.Script{Replies: replies}, func(m *agent.Model) {
		m.Price = &llm.Price{InputPerMTok: 10, CachedInputPerMTok: 1}
	})
	id := r.start(func(s *goal.Settings) { s.BudgetUSD = 0.5 })
	g := r.waitStatus(id, goal.StatusBudgetExceeded)
	if g.State.ModelTurns != 3 {
		t.Fatalf("the budget held the goal after %d model turns, want 3 (at $0.19 a turn)", g.State.ModelTurns)
	}
	if math.Abs(g.State.CostUSD-0.57) > 1e-9 {
		t.Fatalf("cost %.4f, want 0.57", g.State.CostUSD)
	}
}

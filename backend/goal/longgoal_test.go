package goal_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/goal/criterion"
	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
	"github.com/clusterspace/clusterspace/backend/llm/providers"
	"github.com/clusterspace/clusterspace/backend/pubsub"
	"github.com/clusterspace/clusterspace/backend/store/storetest"
	"github.com/clusterspace/clusterspace/backend/tools"
)

// Long goals: a real goal service on SQLite, the scripted model server speaking either wire
// format (with its simulated prompt cache and, if asked, a context limit), and a read-only
// probe tool whose every output is new, so the loop guard lets hundreds of steps run.

const (
	longGoalText  = "Probe every sensor of the test rig"
	longCriterion = "true"
	// probeLines sizes a probe's output (~45 bytes a line).
	probeLines = 10
)

// longPrice is a price with Anthropic-like cache prices: reads a tenth, writes 1.25×.
var longPrice = llm.Price{InputPerMTok: 3, OutputPerMTok: 15, CachedInputPerMTok: 0.3, CacheWritePerMTok: 3.75}

// dumpOutput is a tool output too long for the conversation: its middle is cut there, and
// only the step log has it.
var dumpOutput = strings.Repeat("head line\n", 250) + "THE MIDDLE LINE SAYS 42\n" + strings.Repeat("tail line\n", 250)

func probeOutput(i int) string {
	var b strings.Builder
	for l := range probeLines {
		fmt.Fprintf(&b, "sensor %d line %d: reading %d ok\n", i, l, i*31+l)
	}
	return b.String()
}

type longRig struct {
	tb    testing.TB
	srv   *llmtest.Server
	svc   *goal.Service
	dir   string
	kind  string
	model agent.Model
}

// newLongRig starts the service with the scripted server as a model of the given wire
// format, with the goal tools, probe and dump.
func newLongRig(tb testing.TB, kind string, script llmtest.Script, edit ...func(*agent.Model)) *longRig {
	tb.Helper()
	reg := tools.NewRegistry()
	reg.Register(tools.GoalTools()...)
	reg.Register(probeTool())
	reg.Register(tools.New("dump", "Print a long log.", tools.ReadOnly, func(ctx context.Context, c tools.Call, p struct{}) (tools.Result, error) {
		return tools.Result{Text: dumpOutput}, nil
	}))
	return newLongRigWith(tb, kind, script, reg, edit...)
}

// newLongRigWith is newLongRig over reg.
func newLongRigWith(tb testing.TB, kind string, script llmtest.Script, reg *tools.Registry, edit ...func(*agent.Model)) *longRig {
	tb.Helper()
	srv := llmtest.New(tb, script)
	st, dir := storetest.Open(tb)
	base := srv.OpenAIURL()
	if kind == llm.KindAnthropic {
		base = srv.URL
	}
	prov, err := providers.New(llm.Config{Name: "scripted", Kind: kind, BaseURL: base, Model: "scripted-model", APIKey: "k", MaxTokens: 1024, MaxRetries: -1})
	if err != nil {
		tb.Fatal(err)
	}
	price := longPrice
	m := agent.Model{Provider: prov, Name: "scripted", ModelID: "scripted-model", MaxTokens: 1024, Price: &price}
	for _, e := range edit {
		e(&m)
	}
	broker := pubsub.NewBroker[goal.Event]()
	svc, err := goal.NewService(context.Background(), st, models{m}, reg, broker, goal.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { svc.Shutdown(); broker.Shutdown() })
	return &longRig{tb: tb, srv: srv, svc: svc, dir: dir, kind: kind, model: m}
}

// probeTool reads one sensor of the test rig: probeOutput(i).
func probeTool() tools.Tool {
	return tools.New("probe", "Read one sensor of the test rig.", tools.ReadOnly, func(ctx context.Context, c tools.Call, p struct {
		I int `json:"i"`
	}) (tools.Result, error) {
		return tools.Result{Text: probeOutput(p.I)}, nil
	})
}

// probeSteps scripts n steps: a checklist first (so every request carries the per-turn
// context message), n-2 probes, then the claim.
func probeSteps(n int) []llmtest.Reply {
	out := []llmtest.Reply{call(tools.ToolWriteTodos, map[string]any{"items": []string{"probe every sensor", "claim"}, "active_index": 0})}
	for i := 1; i <= n-2; i++ {
		out = append(out, call("probe", map[string]int{"i": i}))
	}
	return append(out, claim("every sensor answered"))
}

// summaryRole answers the compaction summariser, recognised by its system prompt.
func summaryRole() llmtest.Role {
	return llmtest.Role{Name: "summary", Match: llmtest.Match{System: "You compact the history"},
		Reply: llmtest.Text("Summary: the agent wrote a checklist and probed the sensors in order; every probe answered ok.")}
}

// run starts a goal and waits for it to end.
func (r *longRig) run(edit func(*goal.Settings)) (goal.Goal, []goal.Event) {
	r.tb.Helper()
	id := r.start(edit)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	g, err := r.svc.Wait(ctx, id)
	if err != nil {
		r.tb.Fatalf("wait: %v", err)
	}
	evs, err := r.svc.History(context.Background(), g.ID, 0)
	if err != nil {
		r.tb.Fatal(err)
	}
	return g, evs
}

// waitStatus waits (bounded) until the goal shows status.
func (r *longRig) waitStatus(id string, status goal.Status) goal.Goal {
	r.tb.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		g, err := r.svc.Get(context.Background(), id)
		if err != nil {
			r.tb.Fatal(err)
		}
		if g.Status == status {
			return g
		}
		if g.Status.Finished() || time.Now().After(deadline) {
			r.tb.Fatalf("goal is %s, waited for %s: %s", g.Status, status, g.Report)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// start starts a goal with the long-goal spec.
func (r *longRig) start(edit func(*goal.Settings)) string {
	r.tb.Helper()
	zero := 0
	spec := goal.Spec{PaneID: "p", Goal: longGoalText, Criterion: criterion.Spec{Kind: "shell", Command: longCriterion},
		Settings: goal.Settings{CriticInterval: &zero, WorkDir: r.dir, MaxSteps: 10_000}}
	spec.Policy.Ceiling = tools.WriteLocal
	if edit != nil {
		edit(&spec.Settings)
	}
	g, err := r.svc.Start(context.Background(), spec)
	if err != nil {
		r.tb.Fatalf("start: %v", err)
	}
	return g.ID
}

// mainRequests are the goal conversation's requests (not the critic's, a judge's or the
// summariser's), answered or refused.
func (r *longRig) mainRequests() []llmtest.Request {
	var out []llmtest.Request
	for _, q := range r.srv.ChatRequests() {
		if strings.Contains(q.System, "ClusterSpace's agent") {
			out = append(out, q)
		}
	}
	return out
}

// answered drops the requests the server refused.
func answered(reqs []llmtest.Request) []llmtest.Request {
	var out []llmtest.Request
	for _, q := range reqs {
		if q.Usage != nil {
			out = append(out, q)
		}
	}
	return out
}

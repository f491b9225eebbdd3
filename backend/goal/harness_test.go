package goal_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/goal/criterion"
	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
	"github.com/clusterspace/clusterspace/backend/llm/providers"
	"github.com/clusterspace/clusterspace/backend/pubsub"
	"github.com/clusterspace/clusterspace/backend/store"
	"github.com/clusterspace/clusterspace/backend/store/storetest"
	"github.com/clusterspace/clusterspace/backend/tools"
	"github.com/clusterspace/clusterspace/backend/tools/toolstest"
)

// The fingerprint: totals over every scenario, printed at the end so a change in behaviour
// shows up as a changed line.
var fpScenarios, fpTurns, fpSteps, fpTokens atomic.Int64

func TestMain(m *testing.M) {
	code := m.Run()
	fmt.Printf("goal-eval fingerprint: scenarios=%d model_turns=%d steps=%d tokens=%d\n",
		fpScenarios.Load(), fpTurns.Load(), fpSteps.Load(), fpTokens.Load())
	os.Exit(code)
}

// Critics and judges are recognised by their system prompts, as the real ones would be.
func criticSays(reply string) llmtest.Role {
	return llmtest.Role{Name: "critic", Match: llmtest.Match{System: "You are a critic"}, Reply: llmtest.Text(reply)}
}

// models hands every reference the same scripted model.
type models struct{ m agent.Model }

func (m models) Model(ctx context.Context, ref string) (agent.Model, error) { return m.m, nil }

type rig struct {
	t       *testing.T
	svc     *goal.Service
	st      *store.Store
	srv     *llmtest.Server
	sandbox string
	dbPath  string
	reg     *tools.Registry
	mods    models
	broker  *pubsub.Broker[goal.Event]
}

type rigOpt func(*goal.Options)

// newRig starts a goal service on a real SQLite store, with the scripted model server as the
// model and small real tools that act on a real sandbox directory.
func newRig(t *testing.T, script llmtest.Script, opts ...rigOpt) *rig {
	t.Helper()
	return buildRig(t, script, testRegistry, &llm.Price{InputPerMTok: 1, OutputPerMTok: 2}, opts...)
}

// newRigWith is newRig over reg, with a model that has no price.
func newRigWith(t *testing.T, script llmtest.Script, reg *tools.Registry, opts ...rigOpt) *rig {
	t.Helper()
	return buildRig(t, script, func(string) *tools.Registry { return reg }, nil, opts...)
}

// buildRig is newRig with the tools registry makes for the sandbox, and the model's price.
func buildRig(t *testing.T, script llmtest.Script, registry func(sandbox string) *tools.Registry, price *llm.Price, opts ...rigOpt) *rig {
	t.Helper()
	srv := llmtest.New(t, script)
	dir := t.TempDir()
	sandbox := filepath.Join(dir, "sandbox")
	os.Mkdir(sandbox, 0o755)
	dbPath := filepath.Join(dir, store.FileName)
	st := storetest.OpenIn(t, dir)
	prov, err := providers.New(llm.Config{Name: "scripted", Kind: "openai", BaseURL: srv.OpenAIURL(), Model: "scripted", APIKey: "k", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t, st: st, srv: srv, sandbox: sandbox, dbPath: dbPath, reg: registry(sandbox),
		mods: models{agent.Model{Provider: prov, Name: "scripted", ModelID: "scripted", Price: price}}}
	r.start(opts...)
	return r
}

func (r *rig) start(opts ...rigOpt) {
	o := goal.Options{}
	for _, f := range opts {
		f(&o)
	}
	r.broker = pubsub.NewBroker[goal.Event]()
	svc, err := goal.NewService(context.Background(), r.st, r.mods, r.reg, r.broker, o)
	if err != nil {
		r.t.Fatal(err)
	}
	r.svc = svc
	r.t.Cleanup(func() { svc.Shutdown(); r.broker.Shutdown() })
}

func autoApprove(status agent.ApprovalStatus, reason string) rigOpt {
	return func(o *goal.Options) {
		o.AutoApprove = func(agent.Approval) (agent.ApprovalStatus, string, bool) { return status, reason, true }
	}
}

// spec is a goal with a shell criterion checking for done.txt in the sandbox.
func (r *rig) spec(edit ...func(*goal.Spec)) goal.Spec {
	zero := 0
	s := goal.Spec{PaneID: "term-1", Goal: "Create done.txt in the sandbox",
		Criterion: criterion.Spec{Kind: "shell", Command: "test -f done.txt"},
		Settings:  goal.Settings{CriticInterval: &zero}}
	s.Policy.Ceiling = tools.WriteLocal
	s.Policy.SandboxDir = r.sandbox
	for _, e := range edit {
		e(&s)
	}
	return s
}

// run starts a goal and waits for it to end.
func (r *rig) run(spec goal.Spec) (goal.Goal, []goal.Event) {
	r.t.Helper()
	return r.wait(r.mustStart(spec).ID)
}

// mustStart starts spec, failing the test if the service refuses it.
func (r *rig) mustStart(spec goal.Spec) goal.Goal {
	r.t.Helper()
	g, err := r.svc.Start(context.Background(), spec)
	if err != nil {
		r.t.Fatalf("start: %v", err)
	}
	return g
}

func (r *rig) wait(id string) (goal.Goal, []goal.Event) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	g, err := r.svc.Wait(ctx, id)
	if err != nil {
		r.t.Fatalf("wait: %v", err)
	}
	evs, err := r.svc.History(context.Background(), id, 0)
	if err != nil {
		r.t.Fatal(err)
	}
	fpScenarios.Add(1)
	fpTurns.Add(int64(g.State.ModelTurns))
	fpSteps.Add(int64(g.State.Steps))
	fpTokens.Add(int64(g.State.Usage.Total()))
	return g, evs
}

func eventTypes(evs []goal.Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Type)
	}
	return out
}

func findEvents(evs []goal.Event, typ string) []map[string]any {
	var out []map[string]any
	for _, e := range evs {
		if e.Type == typ {
			var m map[string]any
			json.Unmarshal(e.Data, &m)
			out = append(out, m)
		}
	}
	return out
}

// sawInRequest reports whether any chat request after the first n contains text.
func (r *rig) sawInRequest(text string) bool {
	for _, req := range r.srv.ChatRequests() {
		if strings.Contains(string(req.Body), text) {
			return true
		}
	}
	return false
}

func call(name string, args any) llmtest.Reply { return llmtest.Calls(llmtest.Call(name, args)) }

func claim(why string) llmtest.Reply {
	return call(tools.ToolClaimComplete, map[string]string{"rationale": why})
}

func writeDone() llmtest.Reply {
	return call("write_file", map[string]string{"path": "done.txt", "content": "ok"})
}

// testRegistry: the goal tools plus small real tools for the scenarios.
func testRegistry(sandbox string) *tools.Registry {
	reg := tools.NewRegistry()
	reg.Register(tools.GoalTools()...)
	reg.Register(toolstest.Basic(sandbox)...)
	reg.Register(writeFileTool{sandbox},
		tools.New("browser_look", "Look at a browser pane.", tools.ReadOnly, func(ctx context.Context, c tools.Call, p struct {
			PaneID string `json:"pane_id"`
		}) (tools.Result, error) {
			return tools.Result{Text: "looked at " + p.PaneID}, nil
		}))
	return reg
}

// writeFileTool writes real files under the sandbox; it reports its paths so the policy can
// check them before it runs.
type writeFileTool struct{ sandbox string }

type writeArgs struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

func (w writeFileTool) inner() tools.Tool {
	return tools.New("write_file", "Write a file (path relative to the sandbox).", tools.WriteLocal,
		func(ctx context.Context, c tools.Call, p writeArgs) (tools.Result, error) {
			path := p.Path
			if !filepath.IsAbs(path) {
				path = filepath.Join(w.sandbox, path)
			}
			if err := os.WriteFile(path, []byte(p.Content), 0o644); err != nil {
				return tools.Errorf("%v", err), nil
			}
			return tools.Result{Text: "wrote " + p.Path}, nil
		})
}
func (w writeFileTool) Name() string            { return "write_file" }
func (w writeFileTool) Description() string     { return w.inner().Description() }
func (w writeFileTool) Schema() json.RawMessage { return w.inner().Schema() }
func (w writeFileTool) Risk() tools.Risk        { return tools.WriteLocal }
func (w writeFileTool) Run(ctx context.Context, c tools.Call) (tools.Result, error) {
	return w.inner().Run(ctx, c)
}
func (w writeFileTool) Paths(args json.RawMessage) ([]string, error) {
	var a writeArgs
	if err := json.Unmarshal(args, &a); err != nil {
		return nil, errors.New("arguments are not JSON")
	}
	return []string{a.Path}, nil
}

// waitFile waits (bounded) until path exists.
func waitFile(t *testing.T, path string) {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return
		}
	}
	t.Fatalf("%s did not appear", path)
}

// waitEvent waits (bounded) for a live event of the given type.
func waitEvent(t *testing.T, ch <-chan pubsub.Event[goal.Event], typ string) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				t.Fatalf("the event stream closed before a %s event", typ)
			}
			if ev.Payload.Type == typ {
				return
			}
		case <-timeout:
			t.Fatalf("no %s event within 10 s", typ)
		}
	}
}

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

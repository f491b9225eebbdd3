package chat_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/chat"
	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
	"github.com/clusterspace/clusterspace/backend/llm/providers"
	"github.com/clusterspace/clusterspace/backend/pubsub"
	"github.com/clusterspace/clusterspace/backend/store"
	"github.com/clusterspace/clusterspace/backend/tools"
	"github.com/clusterspace/clusterspace/backend/tools/toolstest"
	"github.com/clusterspace/clusterspace/backend/workspace"
)

const ws = "ws-1"

// The critic and the actor are told apart by their system prompts, as a real server would.
const (
	criticMark = "You are the critic in an actor–critic chat."
	actorMark  = "You are ClusterSpace's assistant"
)

// criticRole answers every critic request with text; actorRole every actor request.
func criticRole(text string) llmtest.Role {
	return llmtest.Role{Name: "critic", Match: llmtest.Match{System: criticMark}, Reply: llmtest.Text(text)}
}

func actorRole(reply llmtest.Reply) llmtest.Role {
	return llmtest.Role{Name: "actor", Match: llmtest.Match{System: actorMark}, Reply: reply}
}

// models hands out scripted models by reference; broken makes every lookup fail.
type models struct {
	mu     sync.Mutex
	byRef  map[string]agent.Model
	broken bool
}

func (m *models) Model(ctx context.Context, ref string) (agent.Model, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.broken {
		return agent.Model{}, errors.New("no provider is configured: add one in Settings → Providers")
	}
	mod, ok := m.byRef[ref]
	if !ok {
		return agent.Model{}, fmt.Errorf("no provider %q", ref)
	}
	return mod, nil
}

func (m *models) set(ref string, mod agent.Model) {
	m.mu.Lock()
	m.byRef[ref] = mod
	m.mu.Unlock()
}

type rig struct {
	t      *testing.T
	srv    *llmtest.Server
	st     *store.Store
	svc    *chat.Service
	broker *pubsub.Broker[chat.Event]
	mods   *models
	reg    *tools.Registry
	events *collector
	dir    string
	opts   chat.Options
	conv   string // the workspace's first conversation, which the tests talk in
}

// newRig starts a chat service on a real SQLite store with one workspace, the scripted model
// server as every model (over real HTTP), and small real tools.
func newRig(t *testing.T, script llmtest.Script) *rig {
	t.Helper()
	return newRigWith(t, script, nil)
}

// newRigWith is newRig with edit applied before the service starts (other tools, options).
func newRigWith(t *testing.T, script llmtest.Script, edit func(*rig)) *rig {
	t.Helper()
	dir := t.TempDir()
	st, err := store.Open(context.Background(), filepath.Join(dir, store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	now := time.Now().UTC()
	if err := st.SaveWorkspace(context.Background(), workspace.Workspace{ID: ws, Name: "Chat", Rows: 1, Cols: 1,
		RowWeights: []float64{1}, ColWeights: []float64{1}, CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t, st: st, srv: llmtest.New(t, script), dir: dir, reg: testRegistry(dir),
		mods: &models{byRef: map[string]agent.Model{}}}
	r.mods.set("", r.model("scripted"))
	r.broker = pubsub.NewBrokerBuffer[chat.Event](1 << 14)
	r.events = collect(t, r.broker)
	t.Cleanup(r.broker.Shutdown)
	if edit != nil {
		edit(r)
	}
	r.start()
	conv, err := r.svc.Current(context.Background(), ws)
	if err != nil {
		t.Fatal(err)
	}
	r.conv = conv
	return r
}

// model is an OpenAI-compatible provider on the scripted server; see modelOf.
func (r *rig) model(name string) agent.Model { return r.modelOf(llm.KindOpenAI, name) }

// modelOf is a provider of kind (its wire format) on the scripted server, whose model is
// name; no retries, so a failure shows at once.
func (r *rig) modelOf(kind, name string) agent.Model {
	url := r.srv.OpenAIURL()
	if kind == llm.KindAnthropic {
		url = r.srv.URL
	}
	prov, err := providers.New(llm.Config{Name: name, Kind: kind, BaseURL: url, Model: name, APIKey: "k", MaxRetries: -1})
	if err != nil {
		r.t.Fatal(err)
	}
	return agent.Model{Provider: prov, Name: name, ModelID: name}
}

// start (or restart) the service on the same store, as a new process would.
func (r *rig) start() {
	svc := chat.NewService(r.st, r.mods, r.reg, r.broker, r.opts)
	r.svc = svc
	r.t.Cleanup(svc.Shutdown)
}

func (r *rig) send(text string) {
	r.t.Helper()
	if err := r.svc.Send(context.Background(), r.conv, text, nil); err != nil {
		r.t.Fatalf("send %q: %v", text, err)
	}
}

func (r *rig) criticMode(on bool) {
	r.t.Helper()
	if _, err := r.svc.SetCriticMode(context.Background(), r.conv, on); err != nil {
		r.t.Fatal(err)
	}
}

func (r *rig) history() []chat.Message {
	r.t.Helper()
	h, err := r.svc.History(context.Background(), r.conv)
	if err != nil {
		r.t.Fatal(err)
	}
	return h
}

func (r *rig) state() chat.State {
	r.t.Helper()
	st, err := r.svc.State(context.Background(), r.conv)
	if err != nil {
		r.t.Fatal(err)
	}
	return st
}

// asked counts the approvals the chat has asked for so far.
func (r *rig) asked() int { return len(r.events.matching(isType(chat.EventApprovalRequested))) }

// stopped waits for the n-th loop_stopped event and returns its reason.
func (r *rig) stopped(n int) chat.StopReason {
	r.t.Helper()
	return r.events.waitN(r.t, n, func(e chat.Event) bool { return e.Type == chat.EventLoopStopped }).Reason
}

// wantStop waits for the n-th loop_stopped event and fails the test unless it stopped for want.
func (r *rig) wantStop(n int, want chat.StopReason) {
	r.t.Helper()
	if reason := r.stopped(n); reason != want {
		r.t.Fatalf("loop stop %d: stopped with %s, want %s", n, reason, want)
	}
}

// stopWithinASecond stops the chat as the Stop button does; the person must not wait for it.
func (r *rig) stopWithinASecond(what string) {
	r.t.Helper()
	start := time.Now()
	if err := r.svc.Stop(context.Background(), r.conv); err != nil {
		r.t.Fatal(err)
	}
	if d := time.Since(start); d > time.Second {
		r.t.Fatalf("%s took %v", what, d)
	}
}

func (r *rig) resume() {
	r.t.Helper()
	if err := r.svc.Resume(context.Background(), r.conv); err != nil {
		r.t.Fatal(err)
	}
}

func (r *rig) setSettings(s chat.Settings) {
	r.t.Helper()
	if _, err := r.svc.SetSettings(context.Background(), r.conv, s); err != nil {
		r.t.Fatal(err)
	}
}

// sources lists the stored messages as "source:text", partial ones marked with "…".
func sources(h []chat.Message) []string {
	var out []string
	for _, m := range h {
		s := string(m.Source) + ":" + m.Message.Text()
		if m.Message.Role == llm.RoleTool {
			s = string(m.Source) + ":tool"
		}
		if m.Partial {
			s += "…"
		}
		out = append(out, s)
	}
	return out
}

// collector keeps every event published, for tests to wait on.
type collector struct {
	mu   sync.Mutex
	evs  []chat.Event
	wake chan struct{}
}

func collect(t *testing.T, b *pubsub.Broker[chat.Event]) *collector {
	c := &collector{wake: make(chan struct{}, 1)}
	ch := b.Subscribe(t.Context())
	go func() {
		for ev := range ch {
			c.mu.Lock()
			c.evs = append(c.evs, ev.Payload)
			c.mu.Unlock()
			select {
			case c.wake <- struct{}{}:
			default:
			}
		}
	}()
	return c
}

func (c *collector) all() []chat.Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]chat.Event(nil), c.evs...)
}

func (c *collector) matching(pred func(chat.Event) bool) []chat.Event {
	var out []chat.Event
	for _, e := range c.all() {
		if pred(e) {
			out = append(out, e)
		}
	}
	return out
}

// waitN waits (at most 10 s) until n events match and returns the n-th.
func (c *collector) waitN(t *testing.T, n int, pred func(chat.Event) bool) chat.Event {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		if got := c.matching(pred); len(got) >= n {
			return got[n-1]
		}
		select {
		case <-c.wake:
		case <-time.After(20 * time.Millisecond):
		case <-deadline:
			var types []string
			for _, e := range c.all() {
				types = append(types, e.Type+"/"+string(e.Source)+"/"+string(e.Reason))
			}
			t.Fatalf("no %d matching events within 10 s; events: %s", n, strings.Join(types, " "))
		}
	}
}

func isType(typ string) func(chat.Event) bool {
	return func(e chat.Event) bool { return e.Type == typ }
}

func deltaFrom(src chat.Source) func(chat.Event) bool {
	return func(e chat.Event) bool { return e.Type == chat.EventMessageDelta && e.Source == src }
}

// sent is a chat request as the scripted server received it (OpenAI wire format).
type sent struct {
	System string
	Tools  []string
	Msgs   []shape
}

type shape struct{ Role, Text string }

func parseRequest(t *testing.T, req llmtest.Request) sent {
	t.Helper()
	var body struct {
		Tools []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
		Messages []struct {
			Role      string          `json:"role"`
			Content   json.RawMessage `json:"content"`
			ToolCalls []any           `json:"tool_calls"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(req.Body, &body); err != nil {
		t.Fatalf("request body: %v", err)
	}
	s := sent{System: req.System}
	for _, tl := range body.Tools {
		s.Tools = append(s.Tools, tl.Function.Name)
	}
	for _, m := range body.Messages {
		if m.Role == "system" || m.Role == "developer" {
			continue
		}
		var text string
		if json.Unmarshal(m.Content, &text) != nil {
			var parts []struct {
				Type, Text string
			}
			json.Unmarshal(m.Content, &parts)
			for _, p := range parts {
				text += p.Text
			}
		}
		if len(m.ToolCalls) > 0 {
			text += fmt.Sprintf("<%d calls>", len(m.ToolCalls))
		}
		s.Msgs = append(s.Msgs, shape{m.Role, text})
	}
	return s
}

func (r *rig) requests() []sent {
	var out []sent
	for _, req := range r.srv.ChatRequests() {
		out = append(out, parseRequest(r.t, req))
	}
	return out
}

func (s sent) critic() bool { return strings.Contains(s.System, criticMark) }

// testRegistry: the goal tools (which chat must not offer) and small real tools.
func testRegistry(dir string) *tools.Registry {
	reg := tools.NewRegistry()
	reg.Register(tools.GoalTools()...)
	reg.Register(toolstest.Basic(dir)...)
	reg.Register(
		tools.New("write_file", "Write a file.", tools.WriteLocal, func(ctx context.Context, c tools.Call, p struct {
			Path    string `json:"path"`
			Content string `json:"content"`
		}) (tools.Result, error) {
			if err := os.WriteFile(filepath.Join(dir, p.Path), []byte(p.Content), 0o644); err != nil {
				return tools.Errorf("%v", err), nil
			}
			return tools.Result{Text: "wrote " + p.Path}, nil
		}),
		checkoutTool{})
	return reg
}

// checkoutTool is read_only by declaration but raises its risk on a payment page, as the
// browser tools do through tools.CallRisk.
type checkoutTool struct{}

func (checkoutTool) Name() string        { return "page_click" }
func (checkoutTool) Description() string { return "Click on the page." }
func (checkoutTool) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"url":{"type":"string"}}}`)
}
func (checkoutTool) Risk() tools.Risk { return tools.ReadOnly }
func (checkoutTool) Run(ctx context.Context, c tools.Call) (tools.Result, error) {
	return tools.Result{Text: "clicked"}, nil
}
func (checkoutTool) RiskFor(args json.RawMessage) (tools.Risk, string) {
	if strings.Contains(string(args), "checkout") {
		return tools.SpendsMoney, "acting on a page that looks like it spends money: checkout"
	}
	return tools.ReadOnly, ""
}

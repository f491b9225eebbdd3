package fleet_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/engine"
	"github.com/clusterspace/clusterspace/backend/fleet"
	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
	"github.com/clusterspace/clusterspace/backend/policy"
	"github.com/clusterspace/clusterspace/backend/tools"
	"github.com/clusterspace/clusterspace/backend/workspace"
)

// behave is what the scripted agent in a pane does on its turn-th turn (0 first), reading
// the request as a model would.
type behave func(pane string, turn int, req llmtest.Request) llmtest.Reply

// rig is a real engine (SQLite, PTYs, the Goal Runner) whose every model call goes over HTTP
// to one scripted server, answering for each pane's agent with behave.
type rig struct {
	t       *testing.T
	eng     *engine.Engine
	srv     *llmtest.Server
	dir     string // the fleets' sandbox
	dataDir string
	opts    []engine.Option // the engine's, beyond the rig's own

	panes *llmtest.Panes // what each pane's agent asked
}

func newRig(t *testing.T, b behave, opts ...engine.Option) *rig {
	t.Helper()
	r := &rig{t: t, dir: t.TempDir(), opts: opts, panes: llmtest.ByPane(b)}
	r.srv = llmtest.New(t, llmtest.Script{Replies: []llmtest.Reply{r.panes.Reply()}})
	r.dataDir = t.TempDir()
	r.open()
	t.Cleanup(func() {
		if r.eng != nil {
			r.eng.Close()
		}
	})
	return r
}

// open opens the rig's engine on its data dir (as the window does: interrupted fleets go on).
func (r *rig) open() {
	r.t.Helper()
	deny := func(agent.Approval) (agent.ApprovalStatus, string, bool) {
		return agent.ApprovalDeny, "denied in this test", true
	}
	opts := append([]engine.Option{engine.WithLogger(slog.New(slog.DiscardHandler)),
		engine.WithAutoApprove(deny), engine.WithCommand("desktop"),
		engine.WithModel(r.srv.Config())}, r.opts...)
	eng, err := engine.Open(context.Background(), r.dataDir, opts...)
	if err != nil {
		r.t.Fatal(err)
	}
	r.eng = eng
}

// close closes the engine as the app does when it quits.
func (r *rig) close() {
	r.t.Helper()
	if err := r.eng.Close(); err != nil {
		r.t.Fatal(err)
	}
	r.eng = nil
}

// spec is the template of the rig's fleets: write_local in the sandbox, no critic.
func (r *rig) spec() fleet.Spec {
	zero := 0
	return fleet.Spec{Policy: policy.Policy{Ceiling: tools.WriteLocal, SandboxDir: r.dir},
		Settings: goal.Settings{CriticInterval: &zero, BounceBudget: 5}}
}

// start creates a fleet from YAML without waiting for it.
func (r *rig) start(yaml string) fleet.Fleet {
	r.t.Helper()
	file, err := fleet.Parse([]byte(yaml))
	if err != nil {
		r.t.Fatal(err)
	}
	f, err := r.eng.Fleets.Create(context.Background(), file, r.spec())
	if err != nil {
		r.t.Fatal(err)
	}
	return f
}

// run creates a fleet from YAML and waits for its end.
func (r *rig) run(yaml string) fleet.Fleet {
	r.t.Helper()
	return r.wait(r.start(yaml).ID)
}

// wait waits for a fleet's end; if it does not come, the test fails showing where it is.
func (r *rig) wait(id string) fleet.Fleet {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f, err := r.eng.Fleets.Wait(ctx, id)
	if err != nil {
		f, _ = r.eng.Fleets.Get(context.Background(), id)
		gs, _ := r.eng.Goals.List(context.Background())
		for _, g := range gs {
			r.t.Logf("goal %s in %s: %s %s", g.ID, g.Spec.PaneID, g.Status, g.Report)
		}
		r.t.Fatalf("fleet did not end: %v\n%+v\nrequests: %v", err, f, r.order())
	}
	return f
}

func (r *rig) requests(pane string) []llmtest.Request { return r.panes.Requests(pane) }

// waitAsked waits until the agent of each pane has asked the model at least once.
func (r *rig) waitAsked(panes ...string) {
	r.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for _, pane := range panes {
		for len(r.requests(pane)) == 0 {
			if time.Now().After(deadline) {
				r.t.Fatalf("the agent of %s never asked the model", pane)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

func (r *rig) order() []string { return r.panes.Order() }

// call runs a registered tool as the given caller.
func (r *rig) call(ctx context.Context, c tools.Call, name string, args any) tools.Result {
	r.t.Helper()
	tool, ok := r.eng.Registry.Get(name)
	if !ok {
		r.t.Fatalf("no tool %s", name)
	}
	c.Name, c.Args = name, mustJSON(args)
	res, err := tool.Run(ctx, c)
	if err != nil {
		res = tools.Result{Text: "Go error: " + err.Error(), IsError: true}
	}
	return res
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

func claim(rationale string) llmtest.Reply {
	return llmtest.Calls(llmtest.Call("claim_complete", map[string]string{"rationale": rationale}))
}

func call(name string, args any) llmtest.Reply { return llmtest.Calls(llmtest.Call(name, args)) }

// heldPane is an agent behaviour: until release is called, the agent in pane answers
// meanwhile; it and every other agent then claim done.
func heldPane(pane string, meanwhile llmtest.Reply) (b behave, release func()) {
	var released atomic.Bool
	return func(p string, turn int, req llmtest.Request) llmtest.Reply {
		if p == pane && !released.Load() {
			return meanwhile
		}
		return claim(p + " done")
	}, func() { released.Store(true) }
}

// quitter keeps agents at work until the app quits and opens again: until reopen, an agent
// of the panes it holds (every pane when it names none) says it started and waits a minute,
// so its task is still running when the rig closes; after reopen, then answers.
type quitter struct {
	panes    []string
	reopened atomic.Bool
	started  chan struct{}
}

func newQuitter(panes ...string) *quitter {
	return &quitter{panes: panes, started: make(chan struct{}, 1)}
}

func (q *quitter) behave(then behave) behave {
	return func(pane string, turn int, req llmtest.Request) llmtest.Reply {
		if !q.reopened.Load() && (len(q.panes) == 0 || slices.Contains(q.panes, pane)) {
			select {
			case q.started <- struct{}{}:
			default:
			}
			return call("wait", map[string]int{"ms": 60000})
		}
		return then(pane, turn, req)
	}
}

// waitStarted waits until a held agent has started; what names it in the failure.
func (q *quitter) waitStarted(t *testing.T, what string) {
	t.Helper()
	select {
	case <-q.started:
	case <-time.After(30 * time.Second):
		t.Fatal(what + " never started")
	}
}

// reopen opens the closed rig again, its held agents now answering with then.
func (q *quitter) reopen(r *rig) {
	q.reopened.Store(true)
	r.open()
}

func taskOf(t *testing.T, f fleet.Fleet, id string) fleet.Task {
	t.Helper()
	task, ok := f.Task(id)
	if !ok {
		t.Fatalf("no task %s in %+v", id, f)
	}
	return *task
}

// pane makes a terminal pane in a workspace of its own, for a goal started outside a fleet.
func (r *rig) pane(id string) {
	r.t.Helper()
	if _, err := r.eng.Workspaces.Adopt(context.Background(), "ws-"+id, id, []workspace.Pane{{ID: id, Kind: workspace.KindTerminal, Label: id}}); err != nil {
		r.t.Fatal(err)
	}
}

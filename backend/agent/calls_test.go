package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/policy"
	"github.com/clusterspace/clusterspace/backend/store"
	"github.com/clusterspace/clusterspace/backend/store/storetest"
	"github.com/clusterspace/clusterspace/backend/tools"
	"github.com/clusterspace/clusterspace/backend/tools/toolstest"
)

// bench is an agent over real tools and a real store, with hooks that record what they see.
type bench struct {
	t       *testing.T
	a       *agent.Agent
	st      *store.Store
	events  []agent.Event
	records []agent.CallRecord
	granted []string
	asked   chan agent.Approval
}

// decideBy adapts a test's check to the agent's Decider.
type decideBy func(tools.Tool, tools.Call) agent.Verdict

func (d decideBy) Decide(_ context.Context, t tools.Tool, c tools.Call) policy.Verdict {
	v := d(t, c)
	return policy.Verdict{Decision: v.Decision, Reason: v.Reason}
}

func newBench(t *testing.T, check func(tools.Tool, tools.Call) agent.Verdict) *bench {
	t.Helper()
	st, dir := storetest.Open(t)
	reg := tools.NewRegistry()
	reg.Register(toolstest.Basic(dir)...)
	b := &bench{t: t, st: st, asked: make(chan agent.Approval, 4)}
	goalID := seedGoal(t, st)
	b.a = &agent.Agent{Scope: "goal", AskHint: "through your report", Registry: reg, Guard: agent.NewGuard(),
		Approvals: agent.NewApprovals(st, nil), Owner: agent.Approval{GoalID: goalID},
		Offer:   func(name string) bool { return name != "sleep" },
		Decider: decideBy(check),
		Hooks: agent.Hooks{
			Grant: func(tool string) { b.granted = append(b.granted, tool) },
			Finish: func(rec agent.CallRecord) llm.ToolResult {
				b.records = append(b.records, rec)
				return rec.Result
			},
			Publish: func(e agent.Event) {
				b.events = append(b.events, e)
				if e.Kind == agent.EventApprovalRequested {
					b.asked <- *e.Approval
				}
			},
		}}
	return b
}

func allow(tools.Tool, tools.Call) agent.Verdict { return agent.Verdict{Decision: policy.Allow} }

func tc(id, name, args string) llm.ToolCall {
	return llm.ToolCall{ID: id, Name: name, Args: json.RawMessage(args)}
}

// Whatever goes wrong, every call gets a result the model can act on, and each is recorded
// once: malformed arguments, a tool this agent is not offered, a refusal, a clean run.
func TestEveryCallGetsAResult(t *testing.T) {
	t.Parallel()
	b := newBench(t, func(tool tools.Tool, call tools.Call) agent.Verdict {
		if call.Name == "http_post" {
			return agent.Verdict{Decision: policy.Deny, Reason: "Refused by the goal's policy: http_post is on the deny list."}
		}
		return agent.Verdict{Decision: policy.Allow}
	})
	os := tc("c3", "read_file", `{"path":"nope.txt"}`)
	batch := b.a.RunCalls(context.Background(), []llm.ToolCall{
		{ID: "c1", Name: "read_file", RawArgs: `{"path": "a`, ArgsError: "read_file was not run: its arguments were cut off."},
		tc("c2", "sleep", `{"ms":1}`),
		os,
		tc("c4", "http_post", `{"url":"https://example.invalid"}`),
		tc("c5", "write_everything", `{}`),
	})
	if batch.Abandoned || batch.Halt != nil || !batch.Failed || len(batch.Results) != 5 {
		t.Fatalf("batch %+v", batch)
	}
	want := []string{"arguments were cut off", `no tool named "sleep" in this goal`, "no such file", "on the deny list", `no tool named "write_everything"`}
	for i, res := range batch.Results {
		if !res.IsError || !strings.Contains(res.Text, want[i]) || res.CallID != "c"+string(rune('1'+i)) {
			t.Errorf("result %d: %+v, want an error with %q", i, res, want[i])
		}
	}
	if !strings.Contains(batch.Results[1].Text, "Available tools: http_post, read_file, run_check") {
		t.Errorf("the unknown-tool result should list the offered tools only: %q", batch.Results[1].Text)
	}
	if len(b.records) != 5 || b.records[0].Ran || !b.records[2].Ran || b.records[3].Ran || string(b.records[0].Args) != `{"raw":"{\"path\": \"a"}` {
		t.Errorf("records: %+v", b.records)
	}
}

// Asking: the request is stored and answerable when announced; "allow for this goal" is
// passed to Grant; a denial's reason reaches the model; a wait the caller stops is withdrawn.
func TestApprovalsThroughTheDesk(t *testing.T) {
	t.Parallel()
	b := newBench(t, func(tool tools.Tool, call tools.Call) agent.Verdict {
		return agent.Verdict{Decision: policy.Ask, Reason: "http_post is network_write, above write_local", Risk: tools.NetworkWrite}
	})
	ctx := context.Background()
	answers := []struct {
		status agent.ApprovalStatus
		reason string
	}{{agent.ApprovalAllowScope, ""}, {agent.ApprovalDeny, "not this host"}}
	go func() {
		for _, ans := range answers {
			req := <-b.asked
			stored, err := b.st.Approvals(ctx, true)
			if err != nil || len(stored) != 1 || stored[0].ID != req.ID || stored[0].GoalID == "" {
				t.Errorf("announced request not stored as pending: %+v %v", stored, err)
			}
			if _, err := b.a.Approvals.Answer(ctx, req.ID, ans.status, ans.reason); err != nil {
				t.Error(err)
			}
		}
	}()
	batch := b.a.RunCalls(ctx, []llm.ToolCall{tc("c1", "http_post", `{"url":"https://a.example"}`), tc("c2", "http_post", `{"url":"https://b.example"}`)})
	if r := batch.Results[0]; r.IsError || r.Text != "posted to https://a.example" {
		t.Errorf("allowed call: %+v", r)
	}
	if r := batch.Results[1]; !r.IsError || !strings.Contains(r.Text, "The user denied this call. Their reason: not this host") ||
		!strings.Contains(r.Text, "ask through your report") {
		t.Errorf("denied call: %+v", r)
	}
	if len(b.granted) != 1 || b.granted[0] != "http_post" {
		t.Errorf("granted %v, want [http_post]", b.granted)
	}
	if pending, _ := b.st.Approvals(ctx, true); len(pending) != 0 {
		t.Errorf("still pending: %+v", pending)
	}

	// The caller stops waiting: the request is withdrawn, in the store and in the event.
	stop, cancel := context.WithCancelCause(ctx)
	go func() { <-b.asked; cancel(errors.New("stopped by the user")) }()
	batch = b.a.RunCalls(stop, []llm.ToolCall{tc("c3", "http_post", `{"url":"https://c.example"}`)})
	if r := batch.Results[0]; !r.IsError || !strings.Contains(r.Text, "stopped waiting for the user's approval") {
		t.Errorf("withdrawn call: %+v", r)
	}
	last := b.events[len(b.events)-1]
	if last.Kind != agent.EventApprovalResolved || last.Approval.Status != agent.ApprovalDeny || !strings.Contains(last.Approval.AnswerReason, "withdrawn") {
		t.Errorf("last event: %+v", last)
	}
	if pending, _ := b.st.Approvals(ctx, true); len(pending) != 0 {
		t.Errorf("a withdrawn request stays pending: %+v", pending)
	}
	if _, err := b.a.Approvals.Answer(ctx, last.Approval.ID, agent.ApprovalAllowOnce, ""); !errors.Is(err, agent.ErrNotWaiting) {
		t.Errorf("answering a withdrawn request: %v", err)
	}
	if _, err := b.a.Approvals.Answer(ctx, "x", "maybe", ""); err == nil || !strings.Contains(err.Error(), "use allow_once, allow_goal or deny") {
		t.Errorf("a bad answer: %v", err)
	}
}

// A batch being put away for a restart is left unfinished and its question stays pending,
// to be asked again by the next process.
func TestAbandonedBatchLeavesTheQuestionPending(t *testing.T) {
	t.Parallel()
	b := newBench(t, func(tool tools.Tool, call tools.Call) agent.Verdict {
		if call.Name == "http_post" {
			return agent.Verdict{Decision: policy.Ask, Reason: "above the ceiling", Risk: tools.NetworkWrite}
		}
		return agent.Verdict{Decision: policy.Allow}
	})
	ctx, cancel := context.WithCancel(context.Background())
	var stopping atomic.Bool
	b.a.Hooks.Abandon = stopping.Load
	go func() { <-b.asked; stopping.Store(true); cancel() }()
	batch := b.a.RunCalls(ctx, []llm.ToolCall{tc("c1", "read_file", `{"path":"x"}`), tc("c2", "http_post", `{"url":"https://a.example"}`)})
	if !batch.Abandoned || batch.Results != nil {
		t.Fatalf("batch %+v, want abandoned", batch)
	}
	if pending, _ := b.st.Approvals(context.Background(), true); len(pending) != 1 || pending[0].Tool != "http_post" {
		t.Fatalf("pending after abandon: %+v", pending)
	}
}

// The guard runs before the caller's check: the fourth identical call is blocked, and the
// fifth block halts the rest of the batch, which is answered "not run".
func TestGuardBlocksAndHalts(t *testing.T) {
	t.Parallel()
	b := newBench(t, allow)
	same := tc("c", "read_file", `{"path":"missing"}`)
	calls := make([]llm.ToolCall, 9)
	for i := range calls {
		calls[i] = same
	}
	batch := b.a.RunCalls(context.Background(), calls)
	if batch.Halt == nil || batch.Halt.Action != agent.GuardHalt {
		t.Fatalf("no halt: %+v", batch)
	}
	// 3 run, 4 blocked (the 3rd identical error also disables the tool), 5th block halts; the
	// ninth is not run.
	if last := batch.Results[8]; !strings.Contains(last.Text, "not run: the goal was stopped before this call") {
		t.Errorf("the call after the halt: %+v", last)
	}
	var guards []string
	for _, e := range b.events {
		if e.Kind == agent.EventGuard {
			guards = append(guards, string(e.Guard.Action)+"/"+e.Guard.Rule)
		}
	}
	if got := strings.Join(guards, ","); got != "disable/error_streak,block/disabled,block/disabled,block/disabled,block/disabled,halt/halt" {
		t.Errorf("guard events %s", got)
	}
}

// A tool slow to notice its cancellation does not hold the loop past the grace period when
// someone owns its goroutine; the model is told the call was interrupted.
func TestStopFreesTheLoopFromASlowTool(t *testing.T) {
	t.Parallel()
	b := newBench(t, allow)
	b.a.Offer = nil
	reg := tools.NewRegistry()
	release := make(chan struct{})
	reg.Register(tools.New("stubborn", "Ignores cancellation for a while.", tools.ReadOnly,
		func(ctx context.Context, c tools.Call, p struct{}) (tools.Result, error) {
			<-release
			return tools.Result{Text: "finished late"}, nil
		}))
	b.a.Registry = reg
	var tasks sync.WaitGroup
	b.a.Tasks = &tasks
	ctx, cancel := context.WithCancelCause(context.Background())
	time.AfterFunc(100*time.Millisecond, func() { cancel(errors.New("stopped by the user")) })
	start := time.Now()
	batch := b.a.RunCalls(ctx, []llm.ToolCall{tc("c1", "stubborn", `{}`)})
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("the loop waited %s for a cancelled tool", took)
	}
	if r := batch.Results[0]; !r.IsError || !strings.Contains(r.Text, "interrupted: the goal was stopped while this call ran") {
		t.Errorf("result %+v", r)
	}
	close(release)
	tasks.Wait() // the tool's goroutine is owned and ends
}

// Consecutive reads of a batch run together (two waits of 400 ms take about 400 ms, not
// 800); a call that is not parallel-safe splits the batch; results keep the calls' order.
func TestParallelSafeCallsRunTogether(t *testing.T) {
	t.Parallel()
	b := newBench(t, allow)
	reg := tools.NewRegistry()
	var running, most atomic.Int32
	wait := func(name string, parallel bool) tools.Tool {
		f := tools.New(name, "Wait a while, then say so.", tools.ReadOnly, func(ctx context.Context, c tools.Call, p struct {
			MS int `json:"ms"`
		}) (tools.Result, error) {
			n := running.Add(1)
			defer running.Add(-1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			time.Sleep(time.Duration(p.MS) * time.Millisecond)
			return tools.Result{Text: fmt.Sprintf("%s waited %d ms", name, p.MS)}, nil
		})
		if parallel {
			return f.Parallel()
		}
		return f
	}
	reg.Register(wait("wait_a", true), wait("wait_b", true), wait("wait_alone", false))
	b.a.Registry, b.a.Offer = reg, nil
	start := time.Now()
	batch := b.a.RunCalls(context.Background(), []llm.ToolCall{
		tc("c1", "wait_a", `{"ms":1000}`), tc("c2", "wait_b", `{"ms":1000}`), tc("c3", "wait_alone", `{"ms":50}`), tc("c4", "wait_a", `{"ms":10}`),
	})
	took := time.Since(start)
	want := []string{"wait_a waited 1000 ms", "wait_b waited 1000 ms", "wait_alone waited 50 ms", "wait_a waited 10 ms"}
	for i, r := range batch.Results {
		if r.Text != want[i] || r.CallID != fmt.Sprintf("c%d", i+1) {
			t.Errorf("result %d: %+v, want %q", i, r, want[i])
		}
	}
	if most.Load() != 2 {
		t.Errorf("at most %d calls ran at once, want 2 (the two parallel-safe waits)", most.Load())
	}
	// Run one after the other the batch takes 2.06 s; together about 1.06 s. The margin
	// between is wide enough for a loaded machine.
	if took > 1800*time.Millisecond {
		t.Errorf("the batch took %s: the two 1 s waits did not run together", took)
	}
	for i, rec := range b.records {
		if rec.Call.ID != fmt.Sprintf("c%d", i+1) {
			t.Errorf("record %d is %s: calls must be recorded in order", i, rec.Call.ID)
		}
	}
}

// A tool above read_only is never run in parallel, whatever it says of itself.
func TestOnlyReadsAreParallelSafe(t *testing.T) {
	t.Parallel()
	writes := tools.New("write", "Write.", tools.WriteLocal, func(context.Context, tools.Call, struct{}) (tools.Result, error) {
		return tools.Result{}, nil
	}).Parallel()
	if writes.ParallelSafe() {
		t.Fatal("a write_local tool claims to be parallel-safe")
	}
}

// Every call carries the agent's work dir, so a tool resolves a relative path where the
// policy judged it (a goal's sandbox), not in the app's own working directory.
func TestCallsCarryTheWorkDir(t *testing.T) {
	t.Parallel()
	b := newBench(t, allow)
	reg := tools.NewRegistry()
	reg.Register(tools.New("where", "Say where relative paths go.", tools.ReadOnly, func(ctx context.Context, c tools.Call, p struct {
		Path string `json:"path"`
	}) (tools.Result, error) {
		abs, err := c.Path(p.Path)
		if err != nil {
			return tools.Errorf("%v", err), nil
		}
		return tools.Result{Text: abs}, nil
	}))
	b.a.Registry, b.a.Offer, b.a.WorkDir = reg, nil, "/sandbox"
	batch := b.a.RunCalls(context.Background(), []llm.ToolCall{tc("c1", "where", `{"path":"out/report.html"}`), tc("c2", "where", `{"path":"/abs/x"}`)})
	if got := batch.Results[0].Text + " " + batch.Results[1].Text; got != "/sandbox/out/report.html /abs/x" {
		t.Fatalf("paths resolved as %q", got)
	}
	b.a.WorkDir = ""
	if r := b.a.RunCalls(context.Background(), []llm.ToolCall{tc("c3", "where", `{"path":"x"}`)}).Results[0]; !r.IsError {
		t.Fatalf("a relative path with no work dir: %+v", r)
	}
}

// bundle is a tool that runs other tools as nested calls of the agent's, as a recipe does.
func bundle(reg *tools.Registry, calls ...[2]string) tools.Tool {
	return tools.New("bundle", "Run several tools.", tools.ReadOnly, func(ctx context.Context, call tools.Call, _ struct{}) (tools.Result, error) {
		if call.Nested == nil {
			return tools.Errorf("no nested calls outside an agent"), nil
		}
		var out []string
		for _, c := range calls {
			tool, ok := reg.Get(c[0])
			if !ok {
				return tools.Errorf("no tool %s", c[0]), nil
			}
			res, err := call.Nested(ctx, tool, json.RawMessage(c[1]))
			if err != nil {
				return tools.Result{}, err
			}
			out = append(out, res.Text)
			if res.IsError {
				break
			}
		}
		return tools.Result{Text: strings.Join(out, " | ")}, nil
	})
}

// Each call a tool makes through the dispatcher is decided by the caller's check at its own
// risk, asks the person when the check says so, and is recorded under an id derived from the
// parent's; a refusal stops nothing the bundle did not choose to stop, and never runs the call.
func TestNestedCallsGoThroughTheCheckAndTheApprovals(t *testing.T) {
	var checked []string
	b := newBench(t, func(tool tools.Tool, call tools.Call) agent.Verdict {
		checked = append(checked, call.ID+" "+call.Name)
		risk, _ := tools.RiskOf(tool, call.Args)
		switch {
		case call.Name == "http_post" && strings.Contains(string(call.Args), "deny"):
			return agent.Verdict{Decision: policy.Deny, Reason: "refused by the test's policy", Risk: risk}
		case call.Name == "http_post":
			return agent.Verdict{Decision: policy.Ask, Reason: "network_write is above the ceiling", Risk: risk}
		}
		return agent.Verdict{Decision: policy.Allow, Risk: risk}
	})
	b.a.Registry.Register(bundle(b.a.Registry, [2]string{"run_check", `{}`}, [2]string{"http_post", `{"url":"https://a.example"}`}, [2]string{"http_post", `{"url":"https://deny.example"}`}))
	// run_check fails, so the bundle stops after its first step.
	res, _, _ := b.a.Call(context.Background(), tc("c1", "bundle", `{}`))
	if len(b.records) != 2 || b.records[0].Call.ID != "c1.1" || b.records[0].Call.Name != "run_check" || b.records[1].Call.ID != "c1" {
		t.Fatalf("records: %+v", b.records)
	}
	if !strings.Contains(res.Text, "connection refused") {
		t.Errorf("bundle result: %q", res.Text)
	}

	b.records, checked = nil, nil
	b.a.Registry = toolsWith(b, bundle(b.a.Registry, [2]string{"http_post", `{"url":"https://a.example"}`}, [2]string{"http_post", `{"url":"https://deny.example"}`}))
	go func() {
		a := <-b.asked
		if a.CallID != "c2.1" || a.Tool != "http_post" {
			t.Errorf("asked: %+v", a)
		}
		for {
			if _, err := b.a.Approvals.Answer(context.Background(), a.ID, agent.ApprovalAllowScope, ""); err == nil {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	res, _, _ = b.a.Call(context.Background(), tc("c2", "bundle", `{}`))
	if strings.Join(checked, ",") != "c2 bundle,c2.1 http_post,c2.2 http_post" {
		t.Errorf("checked: %v", checked)
	}
	if len(b.records) != 3 || !b.records[0].Ran || b.records[1].Ran || !strings.Contains(b.records[1].Result.Text, "refused by the test's policy") {
		t.Fatalf("records: %+v", b.records)
	}
	if !strings.Contains(res.Text, "posted to https://a.example | refused by the test's policy") {
		t.Errorf("bundle result: %q", res.Text)
	}
}

func toolsWith(b *bench, extra tools.Tool) *tools.Registry {
	reg := tools.NewRegistry()
	for _, n := range b.a.Registry.Names() {
		if n != "bundle" {
			tool, _ := b.a.Registry.Get(n)
			reg.Register(tool)
		}
	}
	reg.Register(extra)
	return reg
}

// replaceMasker is a masker of one value.
type replaceMasker struct{ secret, marker string }

func (m replaceMasker) Mask(s string) string { return strings.ReplaceAll(s, m.secret, m.marker) }

// With a masker on its registry, the agent masks a secret wherever a call is recorded,
// published or returned for the model: in the tool's result, in the arguments of the record
// and of the tool_started event, in an approval request (stored and announced), and in a
// denial's text. The tool itself runs with the arguments as the model wrote them.
func TestSecretsMaskedWhereverACallGoes(t *testing.T) {
	t.Parallel()
	const secret, marker = `S3cret-"agent"-7Qx`, "[secret: test]"
	b := newBench(t, func(tool tools.Tool, call tools.Call) agent.Verdict {
		if call.Name == "http_post" {
			return agent.Verdict{Decision: policy.Ask, Reason: "posting " + string(call.Args), Risk: tools.NetworkWrite}
		}
		return agent.Verdict{Decision: policy.Allow}
	})
	var ran []string
	b.a.Registry.Register(tools.New("reveal", "Show the token.", tools.ReadOnly, func(_ context.Context, _ tools.Call, p struct {
		Hint string `json:"hint"`
	}) (tools.Result, error) {
		ran = append(ran, p.Hint)
		out, _ := json.Marshal(map[string]string{"token": secret})
		return tools.Result{Text: "plain " + secret + " json " + string(out)}, nil
	}))
	agent.SetMasker(b.a.Registry, escapingMasker{replaceMasker{secret, marker}})
	ctx := context.Background()
	go func() {
		req := <-b.asked
		b.a.Approvals.Answer(ctx, req.ID, agent.ApprovalDeny, "") // Best effort: the test fails below if not.
	}()
	hint, _ := json.Marshal(map[string]string{"hint": secret})
	post, _ := json.Marshal(map[string]string{"url": "https://x.example/?k=" + secret})
	batch := b.a.RunCalls(ctx, []llm.ToolCall{tc("c1", "reveal", string(hint)), tc("c2", "http_post", string(post))})

	if len(ran) != 1 || ran[0] != secret {
		t.Errorf("the tool ran with %q, want the arguments as written", ran)
	}
	if got := batch.Results[0].Text; got != `plain `+marker+` json {"token":"`+marker+`"}` {
		t.Errorf("the model gets %q", got)
	}
	if !strings.Contains(batch.Results[1].Text, "The user denied this call") {
		t.Errorf("denied call: %+v", batch.Results[1])
	}
	seen, _ := json.Marshal(map[string]any{"results": batch.Results, "records": b.records, "events": b.events})
	stored, err := b.st.Approvals(ctx, false)
	if err != nil || len(stored) != 1 {
		t.Fatalf("stored approvals: %+v %v", stored, err)
	}
	storedJSON, _ := json.Marshal(stored)
	for what, text := range map[string]string{"the results, records and events": string(seen), "the stored approval": string(storedJSON)} {
		if strings.Contains(text, "S3cret") {
			t.Errorf("%s hold the secret: %s", what, text)
		}
		if !strings.Contains(text, marker) {
			t.Errorf("%s lack the marker: %s", what, text)
		}
	}
	if !strings.Contains(string(b.records[0].Args), marker) || !json.Valid(b.records[0].Args) {
		t.Errorf("recorded args: %s", b.records[0].Args)
	}
}

// escapingMasker also masks the secret as a JSON string holds it, as secrets.Masker does.
type escapingMasker struct{ replaceMasker }

func (m escapingMasker) Mask(s string) string {
	esc, _ := json.Marshal(m.secret)
	return strings.ReplaceAll(m.replaceMasker.Mask(s), string(esc[1:len(esc)-1]), m.marker)
}

package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/policy"
	"github.com/clusterspace/clusterspace/backend/tools"
)

// Timeouts of a call's side work.
const (
	// screenshotTimeout bounds the picture taken after a browser action.
	screenshotTimeout = 5 * time.Second
	// toolGrace is how long a stop waits for a cancelled tool to return before the loop moves
	// on without it, so Stop and Pause take effect within a second even if a tool is slow
	// to notice; the tool's goroutine is still waited for at shutdown (Agent.Tasks).
	toolGrace = 500 * time.Millisecond
)

// Batch is what running one reply's tool calls produced.
type Batch struct {
	// Results answer the calls in order; append them as one tool message.
	Results []llm.ToolResult
	// Abandoned: the work is being put away (Hooks.Abandon); Results is incomplete and must
	// not be appended: the next process finishes the batch.
	Abandoned bool
	// Halt is the guard's decision when it halted the agent for repeating itself.
	Halt *GuardDecision
	// Failed: every call of the batch failed.
	Failed bool
}

// RunCalls runs one reply's tool calls in order. Once ctx ends or the guard halts, the rest
// are answered "not run" so the conversation stays well formed. Consecutive calls of
// parallel-safe tools (reads) are decided one by one, then run together; their results
// still come back in the order of the calls.
func (a *Agent) RunCalls(ctx context.Context, calls []llm.ToolCall) Batch {
	b := Batch{Failed: true}
	for i := 0; i < len(calls); {
		if a.abandoning() {
			return Batch{Abandoned: true}
		}
		if ctx.Err() != nil || b.Halt != nil {
			b.Results = append(b.Results, errorResult(calls[i], "not run: the %s was stopped before this call", a.Scope))
			i++
			continue
		}
		n := a.parallelRun(calls[i:])
		results, halt, abandoned := a.group(ctx, calls[i:i+n])
		if abandoned || a.abandoning() {
			return Batch{Abandoned: true}
		}
		b.Results = append(b.Results, results...)
		b.Halt = halt
		i += n
	}
	for _, r := range b.Results {
		b.Failed = b.Failed && r.IsError
	}
	return b
}

// Call runs one call (a batch a restart left unfinished is completed call by call). abandoned
// means the work is being put away and the call has no result yet.
func (a *Agent) Call(ctx context.Context, c llm.ToolCall) (res llm.ToolResult, halt *GuardDecision, abandoned bool) {
	results, halt, abandoned := a.group(ctx, []llm.ToolCall{c})
	if abandoned {
		return llm.ToolResult{}, nil, true
	}
	return results[0], halt, false
}

func (a *Agent) abandoning() bool { return a.Hooks.Abandon != nil && a.Hooks.Abandon() }

// parallelRun is how many calls from the first on may run together: the run of
// parallel-safe calls it starts, or 1.
func (a *Agent) parallelRun(calls []llm.ToolCall) int {
	n := 0
	for _, c := range calls {
		if !a.parallelSafe(c) {
			break
		}
		n++
	}
	return max(n, 1)
}

func (a *Agent) parallelSafe(c llm.ToolCall) bool {
	if c.ArgsError != "" || !a.offered(c.Name) {
		return false
	}
	tool, ok := a.Registry.Get(c.Name)
	if !ok {
		return false
	}
	ps, ok := tool.(tools.ParallelSafe)
	risk, _ := tools.RiskOf(tool, c.Args)
	return ok && ps.ParallelSafe() && risk == tools.ReadOnly
}

// prepared is a call that passed every check and is ready to run.
type prepared struct {
	rec  CallRecord
	tool tools.Tool
	call tools.Call
	note string // the guard's nudge, for the model with the result
}

// group decides the calls one by one (guard, check, approval), runs the ones allowed
// together, and records each in order. One call context covers the group, so a goal's pause
// stops all of it.
func (a *Agent) group(ctx context.Context, calls []llm.ToolCall) ([]llm.ToolResult, *GuardDecision, bool) {
	cctx, release := ctx, func() {}
	if a.Hooks.CallContext != nil {
		cctx, release = a.Hooks.CallContext(ctx)
	}
	defer release()
	results := make([]llm.ToolResult, len(calls))
	ready := make([]*prepared, len(calls))
	var halt *GuardDecision
	for i, c := range calls {
		if halt != nil {
			results[i] = errorResult(c, "not run: the %s was stopped before this call", a.Scope)
			continue
		}
		p, res, h, abandoned := a.decide(ctx, cctx, c)
		if abandoned {
			return nil, nil, true
		}
		ready[i], results[i], halt = p, res, h
	}
	outs := make([]llm.ToolResult, len(calls))
	var wg sync.WaitGroup
	for i, p := range ready {
		if p == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i] = a.execute(ctx, cctx, p)
		}()
	}
	wg.Wait()
	for i, p := range ready {
		if p != nil {
			results[i] = a.settle(p, outs[i])
		}
	}
	return results, halt, false
}

// decide takes one call through argument decoding, the guard, the caller's check and the
// person's approval. It returns the call ready to run, or (p nil) the result the model gets
// instead, already recorded. abandoned: the work is being put away, nothing was recorded.
func (a *Agent) decide(ctx, cctx context.Context, c llm.ToolCall) (p *prepared, res llm.ToolResult, halt *GuardDecision, abandoned bool) {
	args := c.Args
	if c.ArgsError != "" {
		args, _ = json.Marshal(map[string]string{"raw": c.RawArgs})
	}
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	// Secrets: what is recorded and published of the call is masked (masking.go); the tool
	// runs with args as the model wrote them.
	rec := a.record(c, args)
	a.publish(Event{Kind: EventToolStarted, Call: &CallInfo{ID: c.ID, Name: c.Name, Args: rec.Args}})
	if c.ArgsError != "" {
		return nil, a.finish(rec, c.ArgsErrorResult()), nil, false
	}
	tool, ok := a.Registry.Get(c.Name)
	if !ok || !a.offered(c.Name) {
		return nil, a.finish(rec, errorResult(c, "there is no tool named %q in this %s. Available tools: %s", c.Name, a.Scope,
			strings.Join(a.toolNames(), ", "))), nil, false
	}
	return a.decideWith(ctx, cctx, c, tool, args, rec)
}

// decideWith is decide for a tool in hand (a nested call's may be no registered tool).
func (a *Agent) decideWith(ctx, cctx context.Context, c llm.ToolCall, tool tools.Tool, args json.RawMessage, rec CallRecord) (p *prepared, res llm.ToolResult, halt *GuardDecision, abandoned bool) {
	var note string
	if a.Guard != nil {
		switch d := a.Guard.Before(a.guardCall(tool, c.Name, args)); d.Action {
		case GuardAllow:
		case GuardNudge:
			a.publish(Event{Kind: EventGuard, Guard: &d})
			note = d.Message
		default:
			a.publish(Event{Kind: EventGuard, Guard: &d})
			if d.Action == GuardHalt {
				halt = &d
			}
			return nil, a.finish(rec, errorResult(c, "%s", d.Message)), halt, false
		}
	}
	call := a.callOf(c.ID, c.Name, args)
	v := a.verdict(cctx, tool, call)
	switch v.Decision {
	case policy.Deny:
		return nil, a.finish(rec, errorResult(c, "%s", v.Reason)), nil, false
	case policy.Ask:
		answer, err := a.ask(cctx, c, args, v)
		if err != nil {
			if a.abandoning() {
				return nil, llm.ToolResult{}, nil, true // not recorded: asked again on resume
			}
			return nil, a.finish(rec, errorResult(c, "not run: %v", err)), nil, false
		}
		switch answer.Status {
		case ApprovalDeny:
			msg := "The user denied this call."
			if answer.AnswerReason != "" {
				msg += " Their reason: " + answer.AnswerReason
			}
			return nil, a.finish(rec, errorResult(c, "%s Do not retry it as is; find another way or ask %s.", msg, a.AskHint)), nil, false
		case ApprovalAllowScope:
			if a.Hooks.Grant != nil {
				a.Hooks.Grant(c.Name)
			}
		}
	}
	return &prepared{rec: rec, tool: tool, call: call, note: note}, llm.ToolResult{}, nil, false
}

// callOf is a call as the tool gets it: the owner's part (Caller), where the agent works,
// and the call itself.
func (a *Agent) callOf(id, name string, args json.RawMessage) tools.Call {
	call := a.Caller
	call.ID, call.Name, call.Args = id, name, args
	call.Dir, call.Sandbox, call.PaneID, call.WorkspaceID = a.WorkDir, a.Sandbox, a.PaneID, a.WorkspaceID
	return call
}

// verdict is the owner's decision on a call, with the call's own risk for the person.
func (a *Agent) verdict(ctx context.Context, tool tools.Tool, call tools.Call) Verdict {
	risk, _ := tools.RiskOf(tool, call.Args)
	if a.Decider == nil {
		// No decider, no decisions: nothing runs that nobody judged.
		return Verdict{Decision: policy.Deny, Reason: fmt.Sprintf("%s was refused: this %s decides no calls", call.Name, a.Scope), Risk: risk}
	}
	v := a.Decider.Decide(ctx, tool, call)
	return Verdict{Decision: v.Decision, Reason: v.Reason, Risk: risk}
}

// guardCall is a call as the loop guard sees it.
func (a *Agent) guardCall(tool tools.Tool, name string, args json.RawMessage) GuardCall {
	risk, _ := tools.RiskOf(tool, args)
	books := a.bookkeeping(name)
	c := GuardCall{Tool: name, Args: args, Mutates: risk > tools.ReadOnly && !books, Bookkeeping: books}
	if name == tools.ToolClaimComplete && a.Hooks.OpenTodos != nil {
		c.OpenTodos = a.Hooks.OpenTodos()
	}
	return c
}

// CheckWords runs the guard's narrative check on a model turn (its text and how many tools
// it calls): a nudge comes back for the caller to put before the model, and is published.
func (a *Agent) CheckWords(reply llm.Message) *GuardDecision {
	if a.Guard == nil {
		return nil
	}
	d := a.Guard.Said(reply.Text(), len(reply.ToolCalls()))
	if d.Action == GuardAllow {
		return nil
	}
	a.publish(Event{Kind: EventGuard, Guard: &d})
	return &d
}

// execute runs a prepared call and attaches a screenshot. It touches nothing the loop owns,
// so the calls of a parallel group run it at the same time.
func (a *Agent) execute(ctx, cctx context.Context, p *prepared) llm.ToolResult {
	out := a.run(cctx, p.tool, p.call)
	if len(out.Images) == 0 && ctx.Err() == nil {
		a.attachScreenshot(ctx, p.call.Name, p.call.Args, &out)
	}
	return out
}

// settle tells the guard what a call did and records it (on the loop goroutine).
func (a *Agent) settle(p *prepared, out llm.ToolResult) llm.ToolResult {
	// Secrets: masked before the guard reads the result, since its messages quote it.
	out = a.maskResult(out)
	if a.Guard != nil {
		if d := a.Guard.After(a.guardCall(p.tool, p.call.Name, p.call.Args), out.Text, out.IsError); d.Action != GuardAllow {
			a.publish(Event{Kind: EventGuard, Guard: &d})
			out.Text += "\n\n" + d.Message
		}
	}
	if p.note != "" {
		out.Text += "\n\n" + p.note
	}
	p.rec.Ran = true
	return a.finish(p.rec, out)
}

// finish is the choke point every call's outcome passes, run or not, before it is recorded
// (a step, a chat item), published and returned for the model: the secrets the app holds are
// masked here (masking.go; settle masked a tool's own output already, and masking twice
// changes nothing).
func (a *Agent) finish(rec CallRecord, res llm.ToolResult) llm.ToolResult {
	res = a.maskResult(res)
	rec.Result = res
	if a.Hooks.Finish != nil {
		return a.Hooks.Finish(rec)
	}
	return res
}

func (a *Agent) toolNames() []string {
	var names []string
	for _, d := range a.ToolDefs() {
		names = append(names, d.Name)
	}
	return names
}

// ask stores and announces an approval request and waits for the person. A request whose
// wait ends without an answer is withdrawn, unless the work is being put away: then it stays
// pending and is asked again on resume.
func (a *Agent) ask(ctx context.Context, c llm.ToolCall, args json.RawMessage, v Verdict) (Approval, error) {
	req := a.Owner
	// Secrets: the request is stored and shown to the person, so it is masked (masking.go).
	prefix := a.ApprovalPrefix
	if prefix == "" {
		prefix = "appr-"
	}
	req.ID, req.CallID, req.Tool, req.Args = NewID(prefix), c.ID, c.Name, a.maskArgs(args)
	req.Risk, req.Reason, req.Status, req.CreatedAt = v.Risk.String(), a.maskText(v.Reason), ApprovalPending, time.Now().UTC()
	wait, err := a.Approvals.Open(ctx, req)
	if err != nil {
		return req, err
	}
	// Stored and answerable before it is announced: whoever sees the event can answer it.
	a.publish(Event{Kind: EventApprovalRequested, Approval: &req})
	answer, err := wait(ctx)
	// A nested call (a recipe's step) is never asked again on resume, only its parent is: its
	// question is closed whatever the reason the wait ended.
	if err != nil && (!a.abandoning() || isNested(ctx)) {
		answer = a.Approvals.Withdraw(ctx, answer, fmt.Sprintf("the %s stopped waiting", a.Scope))
	}
	a.publish(Event{Kind: EventApprovalResolved, Approval: &answer})
	if err != nil {
		return answer, fmt.Errorf("the %s stopped waiting for the user's approval (%v); call the tool again to ask again", a.Scope, err)
	}
	return answer, nil
}

// run runs the call on its own goroutine so that a stop frees the loop within toolGrace
// even from a tool slow to notice.
func (a *Agent) run(ctx context.Context, tool tools.Tool, call tools.Call) llm.ToolResult {
	type outcome struct {
		res tools.Result
		err error
	}
	ch := make(chan outcome, 1)
	tctx := ctx
	if a.Hooks.ToolContext != nil {
		tctx = a.Hooks.ToolContext(ctx)
	}
	gate := &nestGate{}
	call.Nested = a.nested(call, gate)
	if a.Tasks != nil {
		a.Tasks.Add(1)
	}
	go func() {
		if a.Tasks != nil {
			defer a.Tasks.Done()
		}
		defer func() {
			if p := recover(); p != nil {
				ch <- outcome{err: fmt.Errorf("the tool crashed: %v", p)}
			}
		}()
		res, err := tool.Run(tctx, call)
		ch <- outcome{res, err}
	}()
	var o outcome
	select {
	case o = <-ch:
	case <-ctx.Done():
		if a.Tasks == nil {
			o = <-ch // nobody owns a stray goroutine: wait for the tool to notice
		} else {
			select {
			case o = <-ch:
			case <-time.After(toolGrace):
				o = outcome{err: context.Cause(ctx)}
				// The loop moves on without the tool: from here on its nested calls must not
				// touch the agent's state, which the loop goroutine owns again.
				gate.close()
			}
		}
	}
	res := o.res
	switch {
	case ctx.Err() != nil:
		res = tools.Errorf("%s", a.interrupted(context.Cause(ctx)))
	case o.err != nil:
		res = tools.Errorf("the tool failed: %v", o.err)
	}
	out := llm.ToolResult{CallID: call.ID, Name: call.Name, Text: res.Text, IsError: res.IsError}
	for _, img := range res.Images {
		out.Images = append(out.Images, llm.Image{MediaType: img.MediaType, Data: img.Data})
	}
	return out
}

func (a *Agent) interrupted(cause error) string {
	if a.Hooks.Interrupted != nil {
		if text := a.Hooks.Interrupted(cause); text != "" {
			return text
		}
	}
	return fmt.Sprintf("interrupted: the %s was stopped while this call ran; check its effect before repeating it", a.Scope)
}

// attachScreenshot adds a small picture of the browser pane a call acted on, for a model
// with vision: after a browser action, and after a failed call on a browser pane, the model
// sees the page rather than guessing from text.
func (a *Agent) attachScreenshot(ctx context.Context, name string, args json.RawMessage, out *llm.ToolResult) {
	pane := tools.BrowserPane(name, args)
	if !a.Model.Vision || a.Screenshot == nil || pane == "" {
		return
	}
	sctx, cancel := context.WithTimeout(ctx, screenshotTimeout)
	defer cancel()
	jpeg, err := a.Screenshot(sctx, pane)
	if err != nil || len(jpeg) == 0 {
		return // Best effort: the text result stands on its own.
	}
	out.Images = append(out.Images, llm.Image{MediaType: "image/jpeg", Data: jpeg})
}

func errorResult(c llm.ToolCall, format string, args ...any) llm.ToolResult {
	return llm.ToolResult{CallID: c.ID, Name: c.Name, IsError: true, Text: fmt.Sprintf(format, args...)}
}

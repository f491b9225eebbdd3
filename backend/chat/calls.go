package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/policy"
	"github.com/clusterspace/clusterspace/backend/tools"
)

// Limits of the tool loop, from the product description.
const (
	// maxToolTurns is how many automatic tool turns one user-role message may set off.
	maxToolTurns = 20
	// maxFailingBatches in a row stop the loop: the model is flailing.
	maxFailingBatches = 3
	// toolGrace is how long Stop waits for a cancelled tool to return before the loop moves
	// on without it, so Stop takes effect within a second even if a tool is slow to notice.
	toolGrace = 500 * time.Millisecond
	// toolResultChars bounds one tool result as stored and sent to the model; longer output
	// keeps its head and tail.
	toolResultChars = 16_000
	// keptImages is how many pictures stay in the actor's context: the latest show the page
	// as it is, older ones only cost tokens.
	keptImages = 3
	// screenshotTimeout bounds the picture taken after a browser tool.
	screenshotTimeout = 5 * time.Second
)

// toolDefs are the tools offered in chat: the goal's tools minus the goal tools, which
// steer a goal and mean nothing here.
func (s *Service) toolDefs() []llm.ToolDef {
	var defs []llm.ToolDef
	for _, d := range s.registry.Definitions() {
		if !tools.IsGoalTool(d.Name) {
			defs = append(defs, llm.ToolDef{Name: d.Name, Description: d.Description, Schema: d.Schema})
		}
	}
	return defs
}

// runCalls runs one reply's tool calls in order and stores their results as one message.
// failed: every call in the batch failed. ok is false if the chain ended.
func (r *run) runCalls(calls []llm.ToolCall) (failed, ok bool) {
	results := make([]llm.ToolResult, 0, len(calls))
	failed = true
	for _, c := range calls {
		var res llm.ToolResult
		if r.ctx.Err() != nil {
			res = errorResult(c, "%s", notRunResult)
		} else {
			res = r.handleCall(c)
		}
		failed = failed && res.IsError
		results = append(results, res)
	}
	return failed, r.append(Message{Source: SourceActor, Message: llm.ToolMessage(results...)}, "")
}

// handleCall takes one call through the policy, runs it if allowed, and publishes it as a
// collapsed item. Whatever happens, the model gets a result it can act on.
func (r *run) handleCall(c llm.ToolCall) llm.ToolResult {
	start := time.Now()
	args := c.Args
	if c.ArgsError != "" {
		args, _ = json.Marshal(map[string]string{"raw": c.RawArgs})
	}
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	item := ToolRun{CallID: c.ID, Name: c.Name, Args: args}
	r.publish(Event{Type: EventToolStarted, Source: SourceActor, Tool: &item})
	res := r.decideAndRun(c)
	res.Text = clip(res.Text, toolResultChars)
	item.Result, item.IsError, item.Images, item.DurationMS = res.Text, res.IsError, len(res.Images), time.Since(start).Milliseconds()
	r.publish(Event{Type: EventToolFinished, Source: SourceActor, Tool: &item})
	return res
}

func (r *run) decideAndRun(c llm.ToolCall) llm.ToolResult {
	if c.ArgsError != "" {
		return c.ArgsErrorResult()
	}
	tool, ok := r.svc.registry.Get(c.Name)
	if !ok || tools.IsGoalTool(c.Name) {
		var names []string
		for _, d := range r.svc.toolDefs() {
			names = append(names, d.Name)
		}
		return errorResult(c, "there is no tool named %q in this chat. Available tools: %s", c.Name, strings.Join(names, ", "))
	}
	call := tools.Call{ID: c.ID, Name: c.Name, Args: c.Args}
	if risk, reason := r.askReason(tool, call); reason != "" {
		answer, err := r.ask(c, risk, reason)
		if err != nil {
			return errorResult(c, "not run: %v", err)
		}
		switch answer.Status {
		case goal.ApprovalDeny:
			msg := "The user denied this call."
			if answer.AnswerReason != "" {
				msg += " Their reason: " + answer.AnswerReason
			}
			return errorResult(c, "%s Do not retry it as is; find another way or ask the user.", msg)
		case goal.ApprovalAllowGoal:
			r.ss.grant(c.Name)
		}
	}
	res, err := r.runTool(tool, call)
	switch {
	case r.ctx.Err() != nil:
		res = tools.Errorf("%s", interruptedResult)
	case err != nil:
		res = tools.Errorf("the tool failed: %v", err)
	}
	out := llm.ToolResult{CallID: c.ID, Name: c.Name, Text: res.Text, IsError: res.IsError}
	for _, img := range res.Images {
		out.Images = append(out.Images, llm.Image{MediaType: img.MediaType, Data: img.Data})
	}
	if len(out.Images) == 0 && r.ctx.Err() == nil {
		r.attachScreenshot(c, &out)
	}
	return out
}

// attachScreenshot adds a small picture of the browser pane a call acted on, for an actor
// with vision: after a browser action, and after a failed one, the model sees the page
// rather than guessing from text.
func (r *run) attachScreenshot(c llm.ToolCall, out *llm.ToolResult) {
	pane := tools.BrowserPane(c.Name, c.Args)
	if !r.vision || r.svc.shot == nil || pane == "" {
		return
	}
	ctx, cancel := context.WithTimeout(r.ctx, screenshotTimeout)
	defer cancel()
	jpeg, err := r.svc.shot(ctx, pane)
	if err != nil || len(jpeg) == 0 {
		return // Best effort: the text result stands on its own.
	}
	out.Images = append(out.Images, llm.Image{MediaType: "image/jpeg", Data: jpeg})
}

func errorResult(c llm.ToolCall, format string, args ...any) llm.ToolResult {
	return llm.ToolResult{CallID: c.ID, Name: c.Name, IsError: true, Text: fmt.Sprintf(format, args...)}
}

// askReason is why the call needs the user's yes, or "" if it may run. Chat has no goal
// ceiling: it asks for calls above the workspace's ask-above level, for calls a tool raises
// itself (tools.CallRisk: acting on a page that looks like payment) whatever that level, and
// for calls a tool wants the person to see first (tools.Confirmer: typing a password,
// uploading files).
func (r *run) askReason(tool tools.Tool, call tools.Call) (tools.Risk, string) {
	risk, why := tools.RiskOf(tool, call.Args)
	if why != "" {
		return risk, why
	}
	if c, ok := tool.(tools.Confirmer); ok {
		if why := c.Confirm(r.ctx, call.Args); why != "" {
			return risk, why
		}
	}
	askAbove := r.cfg.Settings.AskAbove
	v := policy.Policy{Ceiling: askAbove}.Check(riskAt{tool, risk}, call, r.ss.grants())
	if v.Decision == policy.Allow {
		return risk, ""
	}
	return risk, fmt.Sprintf("%s is %s, above this workspace's ask-above level %s", call.Name, risk, askAbove)
}

// riskAt is a tool seen at the risk of one particular call.
type riskAt struct {
	tools.Tool
	risk tools.Risk
}

func (t riskAt) Risk() tools.Risk { return t.risk }

// runTool runs the call on its own goroutine so that Stop frees the loop within toolGrace
// even from a tool slow to notice; the goroutine is still waited for at Shutdown.
func (r *run) runTool(tool tools.Tool, call tools.Call) (tools.Result, error) {
	type outcome struct {
		res tools.Result
		err error
	}
	ch := make(chan outcome, 1)
	r.svc.wg.Add(1)
	go func() {
		defer r.svc.wg.Done()
		defer func() {
			if p := recover(); p != nil {
				ch <- outcome{err: fmt.Errorf("the tool crashed: %v", p)}
			}
		}()
		res, err := tool.Run(r.ctx, call)
		ch <- outcome{res, err}
	}()
	select {
	case o := <-ch:
		return o.res, o.err
	case <-r.ctx.Done():
	}
	select {
	case o := <-ch:
		return o.res, o.err
	case <-time.After(toolGrace):
		return tools.Result{}, context.Cause(r.ctx)
	}
}

// waiter is an approval request a loop is blocked on.
type waiter struct {
	a  Approval
	ch chan Approval
}

// ask publishes an approval request and blocks until the user answers or the loop stops.
func (r *run) ask(c llm.ToolCall, risk tools.Risk, reason string) (Approval, error) {
	a := Approval{ID: newID("chat-appr-"), WorkspaceID: r.ss.wsID, CallID: c.ID, Tool: c.Name, Args: c.Args,
		Risk: risk.String(), Reason: reason, Status: goal.ApprovalPending, CreatedAt: time.Now().UTC()}
	w := &waiter{a: a, ch: make(chan Approval, 1)}
	r.svc.mu.Lock()
	r.svc.waiting[a.ID] = w
	r.svc.mu.Unlock()
	r.publish(Event{Type: EventApprovalRequested, Source: SourceActor, Approval: &a})
	select {
	case ans := <-w.ch:
		r.publish(Event{Type: EventApprovalResolved, Source: SourceActor, Approval: &ans})
		return ans, nil
	case <-r.ctx.Done():
	}
	r.svc.mu.Lock()
	delete(r.svc.waiting, a.ID)
	r.svc.mu.Unlock()
	now := time.Now().UTC()
	a.Status, a.AnswerReason, a.AnsweredAt = goal.ApprovalDeny, "withdrawn: the chat stopped waiting", &now
	r.publish(Event{Type: EventApprovalResolved, Source: SourceActor, Approval: &a})
	return a, errors.New("the chat was stopped while waiting for the user's approval")
}

// AnswerApproval answers a chat tool call waiting for the user: allow_once, allow_goal (this
// tool for the rest of the workspace's chat session) or deny.
func (s *Service) AnswerApproval(ctx context.Context, id string, status goal.ApprovalStatus, reason string) (Approval, error) {
	if status != goal.ApprovalAllowOnce && status != goal.ApprovalAllowGoal && status != goal.ApprovalDeny {
		return Approval{}, &FieldError{"status", fmt.Sprintf("%q is not an answer; use allow_once, allow_goal or deny", status)}
	}
	s.mu.Lock()
	w, ok := s.waiting[id]
	delete(s.waiting, id)
	s.mu.Unlock()
	if !ok {
		return Approval{}, fmt.Errorf("approval %q is not waiting for an answer (answered already, or its chat stopped): %w", id, ErrNotFound)
	}
	now := time.Now().UTC()
	a := w.a
	a.Status, a.AnswerReason, a.AnsweredAt = status, reason, &now
	w.ch <- a
	return a, nil
}

// pendingApprovals lists the requests a workspace's chat waits on, oldest first.
func (s *Service) pendingApprovals(wsID string) []Approval {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []Approval{}
	for _, w := range s.waiting {
		if w.a.WorkspaceID == wsID {
			out = append(out, w.a)
		}
	}
	slices.SortFunc(out, func(a, b Approval) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return out
}

func (ss *session) grant(tool string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if !slices.Contains(ss.granted, tool) {
		ss.granted = append(ss.granted, tool)
	}
}

func (ss *session) grants() []string {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return slices.Clone(ss.granted)
}

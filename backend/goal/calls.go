package goal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/policy"
	"github.com/clusterspace/clusterspace/backend/tools"
)

// maxStoredResult bounds what a step keeps of a tool's output for the step log.
const maxStoredResult = 64 << 10

// runCalls runs one reply's tool calls in order and appends their results as one message.
func (r *run) runCalls(calls []llm.ToolCall) {
	var results []llm.ToolResult
	for _, call := range calls {
		if r.shuttingDown() {
			// Leave the batch unfinished: the next process finishes it from the step log.
			return
		}
		if r.ctx.Err() != nil || r.halt != nil {
			results = append(results, llm.ToolResult{CallID: call.ID, Name: call.Name, IsError: true,
				Text: "not run: the goal is stopping"})
			continue
		}
		res := r.handleCall(call)
		if r.shuttingDown() {
			return // as above: the batch stays open for the next process
		}
		results = append(results, res)
	}
	r.append(llm.ToolMessage(results...))
	r.commit()
}

// attachScreenshot adds a small picture of the browser pane a call acted on, for a model
// with vision: after a browser action, and after a failed call on a browser pane, the model
// sees the page rather than guessing from text.
func (r *run) attachScreenshot(call llm.ToolCall, args json.RawMessage, out *llm.ToolResult) {
	pane := tools.BrowserPane(call.Name, args)
	if !r.model.Vision || r.svc.opts.Screenshot == nil || pane == "" {
		return
	}
	ctx, cancel := context.WithTimeout(r.ctx, screenshotTimeout)
	defer cancel()
	jpeg, err := r.svc.opts.Screenshot(ctx, pane)
	if err != nil || len(jpeg) == 0 {
		return // Best effort: the text result stands on its own.
	}
	img := llm.Image{MediaType: "image/jpeg", Data: jpeg}
	out.Images = append(out.Images, img)
	r.lastImage = &img
}

// shuttingDown reports whether the app is stopping (the goal will be resumable).
func (r *run) shuttingDown() bool { return errors.Is(context.Cause(r.ctx), errShutdown) }

// finishBatch completes a batch interrupted by a restart: stored results are replayed as they
// were, and calls that waited for approval go through the policy again (and so ask again).
func (r *run) finishBatch(batch []resumeCall) {
	var results []llm.ToolResult
	for _, rc := range batch {
		if rc.result != nil {
			results = append(results, *rc.result)
			continue
		}
		results = append(results, r.handleCall(rc.call))
	}
	r.append(llm.ToolMessage(results...))
	r.commit()
}

// handleCall takes one call through the guard, the step protocol and the policy, runs it if
// allowed, and records the step. Whatever happens, the model gets a result it can act on.
func (r *run) handleCall(call llm.ToolCall) llm.ToolResult {
	start := time.Now()
	args := call.Args
	if call.ArgsError != "" {
		args = json.RawMessage(mustJSON(map[string]string{"raw": call.RawArgs}))
		return r.record(call, args, call.ArgsErrorResult(), start)
	}
	tool, ok := r.svc.registry.Get(call.Name)
	if !ok {
		return r.record(call, args, errorResult(call, "there is no tool named %q. Available tools: %s", call.Name, strings.Join(r.svc.registry.Names(), ", ")), start)
	}
	if d := r.guard.Before(call.Name, args); d.Action != GuardAllow {
		r.g.State.GuardBlocks = r.guard.Blocks()
		r.event(EventGuard, d)
		if d.Action == GuardHalt {
			report := d.Message
			r.halt = &report
		}
		return r.record(call, args, errorResult(call, "%s", d.Message), start)
	}
	if r.policy.RequireStepProtocol && tool.Risk() > tools.ReadOnly && !tools.IsGoalTool(call.Name) && r.g.State.Declared == nil {
		return r.record(call, args, errorResult(call,
			"%s was refused: this goal requires the step protocol. Call declare_step first (what you will do and how you will know it worked), then this tool, then verify_step.", call.Name), start)
	}
	verdict := r.policy.Check(tool, tools.Call{ID: call.ID, Name: call.Name, Args: args, GoalID: r.g.ID}, r.g.State.Granted)
	switch verdict.Decision {
	case policy.Deny:
		return r.record(call, args, errorResult(call, "Refused by the goal's policy: %s. Do not retry it; find another way.", verdict.Reason), start)
	case policy.Ask:
		answer, err := r.askApproval(tool, call, args, verdict.Reason)
		if err != nil {
			if r.shuttingDown() {
				return llm.ToolResult{} // not recorded: the request is asked again on resume
			}
			return r.record(call, args, errorResult(call, "not run: %v", err), start)
		}
		switch answer.Status {
		case ApprovalDeny:
			msg := "The user denied this call."
			if answer.AnswerReason != "" {
				msg += " Their reason: " + answer.AnswerReason
			}
			return r.record(call, args, errorResult(call, "%s Do not retry it as is; find another way or ask through your report.", msg), start)
		case ApprovalAllowGoal:
			r.g.State.Granted = append(r.g.State.Granted, call.Name)
		}
	}
	ctx, done := r.turnContext()
	res, err := tool.Run(tools.WithGoal(ctx, r), tools.Call{ID: call.ID, Name: call.Name, Args: args, GoalID: r.g.ID})
	cause := context.Cause(ctx)
	done()
	switch {
	case errors.Is(cause, errPaused):
		res = tools.Errorf("interrupted: the user paused the goal while this ran; check its effect before repeating it")
	case r.ctx.Err() != nil:
		res = tools.Errorf("interrupted: the goal is stopping")
	case err != nil:
		res = tools.Errorf("the tool failed: %v", err)
	}
	out := llm.ToolResult{CallID: call.ID, Name: call.Name, Text: res.Text, IsError: res.IsError}
	for _, img := range res.Images {
		li := llm.Image{MediaType: img.MediaType, Data: img.Data}
		out.Images = append(out.Images, li)
		r.lastImage = &li
	}
	if len(out.Images) == 0 {
		r.attachScreenshot(call, args, &out)
	}
	if d := r.guard.After(call.Name, args, res.Text, res.IsError); d.Action == GuardDisable {
		r.event(EventGuard, d)
		out.Text += "\n\n" + d.Message
	}
	if !tools.IsGoalTool(call.Name) {
		r.g.State.StepsSinceCritic++
	}
	return r.record(call, args, out, start)
}

func errorResult(call llm.ToolCall, format string, args ...any) llm.ToolResult {
	return llm.ToolResult{CallID: call.ID, Name: call.Name, IsError: true, Text: fmt.Sprintf(format, args...)}
}

// record numbers the step, queues it and its event for the next commit, and returns the
// result as the model will see it (long output cut).
func (r *run) record(call llm.ToolCall, args json.RawMessage, res llm.ToolResult, start time.Time) llm.ToolResult {
	r.g.State.Steps++
	stored := res.Text
	if len(stored) > maxStoredResult {
		stored = stored[:maxStoredResult] + "\n[… cut for the step log …]"
	}
	st := Step{GoalID: r.g.ID, Index: r.g.State.Steps, CallID: call.ID, Tool: call.Name, Args: args, Result: stored,
		IsError: res.IsError, StartedAt: start.UTC(), DurationMS: time.Since(start).Milliseconds(), Images: len(res.Images), Pictures: res.Images}
	r.pend.steps = append(r.pend.steps, st)
	r.event(EventStep, map[string]any{"index": st.Index, "tool": st.Tool, "args": st.Args, "isError": st.IsError,
		"preview": truncate(oneLine(st.Result), 200), "durationMs": st.DurationMS, "images": st.Images})
	r.commit()
	res.Text = cutResult(res.Text)
	return res
}

// askApproval asks the user and waits (the goal shows awaiting_approval meanwhile).
func (r *run) askApproval(tool tools.Tool, call llm.ToolCall, args json.RawMessage, reason string) (Approval, error) {
	ctx, done := r.turnContext()
	defer done()
	r.stopClock()
	defer r.startClock()
	a := Approval{ID: newID("appr-"), GoalID: r.g.ID, CallID: call.ID, Tool: call.Name, Args: args,
		Risk: tool.Risk().String(), Reason: reason, Status: ApprovalPending, CreatedAt: time.Now().UTC()}
	// Stored and answerable before it is announced: whoever sees the event can answer it.
	wait, err := r.svc.approvals.open(ctx, a)
	if err != nil {
		return a, err
	}
	r.setStatus(StatusAwaitingApproval)
	r.event(EventApprovalRequested, a)
	r.commit()
	answer, err := wait(ctx)
	if errors.Is(context.Cause(ctx), errPaused) {
		err = errors.New("the goal was paused while waiting for approval; call the tool again to ask again")
	}
	r.setStatus(StatusRunning)
	if answer.Status != ApprovalPending {
		// Answered, or withdrawn because the goal paused or stopped: either way the question
		// is closed. A request left pending by a shutdown is asked again on resume.
		r.event(EventApprovalResolved, answer)
	}
	r.commit()
	return answer, err
}

// The goal tools' view of the run (tools.GoalControl). They run on the loop's goroutine.

func (r *run) ClaimComplete(rationale string) string {
	r.claim = &rationale
	return "Claim received. It will be verified against the success criterion after this turn's tool calls."
}

func (r *run) AbortWithReport(reason, learned string) string {
	report := "Aborted by the agent: " + reason
	if strings.TrimSpace(learned) != "" {
		report += "\n\nWhat was learned: " + learned
	}
	r.abort = &report
	return "Abort received; the goal ends with your report."
}

func (r *run) WriteTodos(items []string, active int) (string, error) {
	if len(items) == 0 {
		return "", errors.New("write_todos needs at least one item")
	}
	if active < 0 || active >= len(items) {
		return "", fmt.Errorf("active_index %d is outside the list of %d items (0-based)", active, len(items))
	}
	todos := make([]Todo, len(items))
	for i, it := range items {
		todos[i] = Todo{Text: it}
	}
	r.g.State.Todos, r.g.State.ActiveTodo = todos, active
	r.event(EventNotice, map[string]any{"todos": todos, "active": active})
	return fmt.Sprintf("Checklist saved (%d items). It is shown to you every turn.", len(items)), nil
}

func (r *run) CompleteTodo(index int, note string) (string, error) {
	if index < 0 || index >= len(r.g.State.Todos) {
		return "", fmt.Errorf("index %d is outside the checklist of %d items (0-based); call write_todos first if there is none", index, len(r.g.State.Todos))
	}
	r.g.State.Todos[index].Done, r.g.State.Todos[index].Note = true, note
	next := -1
	for i, t := range r.g.State.Todos {
		if !t.Done {
			next = i
			break
		}
	}
	if next >= 0 {
		r.g.State.ActiveTodo = next
		return fmt.Sprintf("Item %d done. Next: %d. %s", index, next, r.g.State.Todos[next].Text), nil
	}
	return "All checklist items are done. If the goal is achieved, call claim_complete.", nil
}

func (r *run) DeclareStep(number int, title, action, successCriteria string) (string, error) {
	if strings.TrimSpace(title) == "" || strings.TrimSpace(action) == "" || strings.TrimSpace(successCriteria) == "" {
		return "", errors.New("declare_step needs a title, an action and success_criteria")
	}
	r.g.State.Declared = &DeclaredStep{Number: number, Title: title, Action: action, SuccessCriteria: successCriteria}
	return fmt.Sprintf("Step %d declared. Act, then call verify_step.", number), nil
}

func (r *run) VerifyStep(number int, passed bool, observation, nextAction string) (string, error) {
	d := r.g.State.Declared
	if d == nil || d.Number != number {
		return "", fmt.Errorf("step %d was not declared; call declare_step first", number)
	}
	r.g.State.Declared = nil
	if passed {
		return fmt.Sprintf("Step %d verified. Next: %s", number, nextAction), nil
	}
	return fmt.Sprintf("Step %d did not work (%s). Think about why before the next action: %s", number, observation, nextAction), nil
}

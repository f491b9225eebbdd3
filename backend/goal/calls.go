package goal

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/goal/criterion"
	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/policy"
	"github.com/clusterspace/clusterspace/backend/tools"
)

// maxStoredResult bounds what a step keeps of a tool's output for the step log. The step log
// holds outputs whole (read_step_output reads them back) while the conversation carries
// only a cut, or a stub once they are old.
const maxStoredResult = 1 << 20

// readStepLimit is the most read_step_output returns at once.
const readStepLimit = 8000

// newAgent is the turn engine of this run, with the goal's hooks: its policy and step
// protocol decide calls, every call becomes a step, and the agent's events become the goal's.
func (r *run) newAgent() *agent.Agent {
	guard := agent.NewGuardWith(r.g.Spec.Settings.Guard)
	guard.RestoreBlocks(r.g.State.GuardBlocks)
	return &agent.Agent{
		Scope: "goal", AskHint: "through your report", Model: r.model, Registry: r.svc.registry, Guard: guard, WorkDir: r.workDir(), Sandbox: r.policy.SandboxDir,
		PaneID:    r.g.Spec.PaneID,
		Approvals: r.svc.approvals, Owner: agent.Approval{GoalID: r.g.ID},
		Decider: r.decider(), Caller: tools.Call{GoalID: r.g.ID}, Bookkeeping: tools.IsGoalTool,
		Screenshot: r.svc.opts.Screenshot, Tasks: &r.svc.wg,
		ByNeed: true, Browser: r.g.Spec.Criterion.Kind == criterion.KindVisual, Fleet: r.g.Spec.Group != "", // tools by need (agent/offer.go); a visual criterion looks at a page
		Hooks: agent.Hooks{
			Grant:       func(tool string) { r.g.State.Granted = append(r.g.State.Granted, tool) },
			Finish:      r.record,
			Publish:     r.onAgentEvent,
			CallContext: func(context.Context) (context.Context, func()) { return r.turnContext() },
			ToolContext: func(ctx context.Context) context.Context { return tools.WithGoal(ctx, r) },
			Interrupted: func(cause error) string {
				if errors.Is(cause, agent.Paused) {
					return "interrupted: the user paused the goal while this ran; check its effect before repeating it"
				}
				if errors.Is(cause, agent.WallClock) {
					return "interrupted: the goal's wall clock ran out while this ran"
				}
				return "interrupted: the goal is stopping"
			},
			Abandon:   r.shuttingDown,
			OpenTodos: r.openTodos,
			Compacted: r.compacted,
			Usage:     r.addUsage,
			StepOf:    func(callID string) int { return r.stepOf[callID] },
		},
		ConversationID: r.g.ID, Summarizer: &r.critic, Compaction: r.g.State.Compaction,
	}
}

// compacted keeps a new compaction with the goal and puts it on the rail.
func (r *run) compacted(c agent.Compaction) {
	r.g.State.Compaction = &c
	r.event(EventCompaction, map[string]any{"count": c.Count, "summarisedThrough": c.Through, "stubbedThrough": c.StubThrough,
		"tokensBefore": c.TokensBefore, "tokensAfter": c.TokensAfter})
	r.commit()
}

// workDir is where the goal works: its sandbox, where the policy judges paths, else its work
// dir. Relative tool paths and shell criteria mean it.
func (r *run) workDir() string {
	if r.policy.SandboxDir != "" {
		return r.policy.SandboxDir
	}
	return r.g.Spec.Settings.WorkDir
}

// openTodos lists the checklist items not done yet.
func (r *run) openTodos() []string {
	var open []string
	for _, t := range r.g.State.Todos {
		if !t.Done {
			open = append(open, t.Text)
		}
	}
	return open
}

// storeBatch appends a batch's results as one message.
func (r *run) storeBatch(b agent.Batch) {
	if b.Abandoned {
		return // the batch stays open: the next process finishes it from the step log
	}
	r.noteHalt(b.Halt)
	// Stored with the next commit (the next reply's, at the latest): every result is in the
	// step log already, committed as each call was recorded, and a restart in between
	// rebuilds this message from it (repairConversation), so a step costs one commit less.
	r.append(llm.ToolMessage(b.Results...))
}

func (r *run) noteHalt(d *agent.GuardDecision) {
	if d != nil {
		report := d.Message
		r.halt = &report
	}
}

// shuttingDown reports whether the app is stopping (the goal will be resumable).
func (r *run) shuttingDown() bool { return errors.Is(context.Cause(r.ctx), agent.Shutdown) }

// finishBatch completes a batch interrupted by a restart: stored results are replayed as they
// were, and calls that waited for approval go through the policy again (and so ask again).
func (r *run) finishBatch(batch []resumeCall) {
	var results []llm.ToolResult
	for _, rc := range batch {
		if rc.result != nil {
			results = append(results, *rc.result)
			continue
		}
		res, halt, abandoned := r.ag.Call(r.ctx, rc.call)
		if abandoned {
			return
		}
		r.noteHalt(halt)
		results = append(results, res)
	}
	r.append(llm.ToolMessage(results...))
	r.commit()
}

// decider decides the goal's calls: its own rules (the step protocol, the files no goal may
// touch), then its policy (risk ceiling, allow and deny lists, sandbox and boundary), with the
// tools the user allowed for this goal.
func (r *run) decider() policy.Decider {
	return policy.Decider{
		Policy:  r.policy,
		Rules:   []policy.Rule{r.stepProtocol, r.untouchable},
		Granted: func() []string { return r.g.State.Granted },
		Refused: func(reason string) string {
			return fmt.Sprintf("Refused by the goal's policy: %s. Do not retry it; find another way.", reason)
		},
	}
}

// stepProtocol refuses a mutating call made without a declared step, when the goal asks for
// the protocol.
func (r *run) stepProtocol(_ context.Context, tool tools.Tool, call tools.Call) (policy.Verdict, bool) {
	if r.policy.RequireStepProtocol && tool.Risk() > tools.ReadOnly && !tools.IsGoalTool(call.Name) && r.g.State.Declared == nil {
		return policy.Verdict{Decision: policy.Deny, Reason: fmt.Sprintf(
			"%s was refused: this goal requires the step protocol. Call declare_step first (what you will do and how you will know it worked), then this tool, then verify_step.", call.Name)}, true
	}
	return policy.Verdict{}, false
}

// untouchable refuses a call naming a path in the app's data, config or secret files.
func (r *run) untouchable(_ context.Context, tool tools.Tool, call tools.Call) (policy.Verdict, bool) {
	if why := r.hiddenPath(tool, call); why != "" {
		return policy.Verdict{Decision: policy.Deny, Reason: fmt.Sprintf("Refused by the goal's policy: %s. Do not retry it; find another way.", why)}, true
	}
	return policy.Verdict{}, false
}

// hiddenPath says why a confined goal's call touches what no goal may (the app's data, config
// and secret files), "" when it does not: nobody can allow that, so it is refused.
func (r *run) hiddenPath(tool tools.Tool, call tools.Call) string {
	pu, ok := tool.(tools.PathUser)
	if !ok || r.policy.SandboxDir == "" || r.svc.opts.Hidden == nil {
		return ""
	}
	paths, err := pu.Paths(call.Args)
	if err != nil {
		return ""
	}
	hidden := r.svc.opts.Hidden() // read once a call: it lists the data dirs from a file
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			p = filepath.Join(r.workDir(), p)
		}
		for _, h := range hidden {
			if in, err := policy.Contains(h, p); err == nil && in {
				return fmt.Sprintf("%q is in %s, the app's own data or secrets, which no goal may touch", p, h)
			}
		}
	}
	return ""
}

// onAgentEvent turns the agent's events into the goal's story.
func (r *run) onAgentEvent(e agent.Event) {
	switch e.Kind {
	case agent.EventDelta:
		if !e.Reasoning {
			r.svc.publishLive(Event{GoalID: r.g.ID, Type: EventDelta, Data: mustJSON(map[string]string{"text": e.Text}), At: time.Now().UTC()})
		}
	case agent.EventNotice:
		r.event(EventNotice, map[string]string{"message": e.Text})
	case agent.EventGuard:
		r.g.State.GuardBlocks = r.ag.Guard.Blocks()
		r.event(EventGuard, e.Guard)
	case agent.EventApprovalRequested:
		// Time spent waiting for a person does not use up the wall clock.
		r.stopClock()
		r.setStatus(StatusAwaitingApproval)
		r.event(EventApprovalRequested, e.Approval)
		r.commit()
	case agent.EventApprovalResolved:
		r.startClock()
		r.setStatus(StatusRunning)
		if e.Approval.Status != agent.ApprovalPending {
			// Answered, or withdrawn because the goal paused or stopped: either way the
			// question is closed. One left pending by a shutdown is asked again on resume.
			r.event(EventApprovalResolved, e.Approval)
		}
		r.commit()
	}
}

// record numbers the step, queues it and its event for the next commit, and returns the
// result as the model will see it (long output cut).
func (r *run) record(rec agent.CallRecord) llm.ToolResult {
	res := rec.Result
	if rec.Ran && !tools.IsGoalTool(rec.Call.Name) {
		r.g.State.StepsSinceCritic++
	}
	if n := len(res.Images); n > 0 {
		r.lastImage = &res.Images[n-1]
	}
	r.g.State.Steps++
	stored := res.Text
	if len(stored) > maxStoredResult {
		stored = stored[:maxStoredResult] + "\n[… cut for the step log …]"
	}
	st := Step{GoalID: r.g.ID, Index: r.g.State.Steps, CallID: rec.Call.ID, Tool: rec.Call.Name, Args: rec.Args, Result: stored,
		IsError: res.IsError, StartedAt: rec.Start.UTC(), DurationMS: time.Since(rec.Start).Milliseconds(), Images: len(res.Images), Pictures: res.Images,
		Usage: r.turnUsage}
	r.turnUsage = nil // the turn's tokens go with its first step only
	r.stepOf[rec.Call.ID] = st.Index
	r.pend.steps = append(r.pend.steps, st)
	data := map[string]any{"index": st.Index, "tool": st.Tool, "args": st.Args, "isError": st.IsError,
		"preview": agent.Truncate(oneLine(st.Result), 200), "durationMs": st.DurationMS, "images": st.Images}
	if st.Usage != nil {
		data["usage"] = st.Usage
	}
	r.event(EventStep, data)
	r.commit()
	res.Text = cutResult(res.Text, st.Index)
	return res
}

// The goal tools' view of the run (tools.GoalControl). The loop goroutine waits while they
// run, so they may touch the run's state.

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

func (r *run) ReadStepOutput(step, offset, limit int) (string, error) {
	if step < 1 || step > r.g.State.Steps {
		return "", fmt.Errorf("there is no step %d: steps are numbered 1 to %d", step, r.g.State.Steps)
	}
	steps, err := r.svc.repo.GoalSteps(context.WithoutCancel(r.ctx), r.g.ID, step-1, 1)
	if err != nil || len(steps) == 0 || steps[0].Index != step {
		return "", fmt.Errorf("step %d's output is no longer kept: a long goal's step log keeps its first and its latest steps; run the step's tool again if you need it", step)
	}
	out := steps[0].Result
	if offset < 0 || offset > len(out) {
		return "", fmt.Errorf("offset %d is outside step %d's output of %d characters", offset, step, len(out))
	}
	if limit <= 0 || limit > readStepLimit {
		limit = readStepLimit
	}
	end := min(len(out), offset+limit)
	for end < len(out) && !utf8.RuneStart(out[end]) {
		end--
	}
	for offset < end && !utf8.RuneStart(out[offset]) {
		offset++
	}
	head := fmt.Sprintf("[step %d (%s), characters %d–%d of %d]\n", step, steps[0].Tool, offset, end, len(out))
	if end < len(out) {
		return head + out[offset:end] + fmt.Sprintf("\n[… more: read_step_output {\"step\": %d, \"offset\": %d}]", step, end), nil
	}
	return head + out[offset:end], nil
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

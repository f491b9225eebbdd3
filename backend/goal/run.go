package goal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/goal/criterion"
	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/policy"
	"github.com/clusterspace/clusterspace/backend/tools"
)

// A run's contexts end with one of agent's causes: agent.Stopped (the person aborted it),
// agent.Shutdown (the app closes; the goal resumes later), agent.Paused (a turn or call is cut
// off and done again on resume).

// errNotSaved ends a run whose progress the store refused to take (see commit).
var errNotSaved = errors.New("the goal's progress could not be saved")

// saveRetryDelay is how long a failed save waits before its one retry.
const saveRetryDelay = 200 * time.Millisecond

// finalTurnTimeout bounds the explanation turn after the clock or the step cap trips.
const finalTurnTimeout = 2 * time.Minute

// evidenceSteps is how many recent step summaries judges and the finalize critic see.
const evidenceSteps = 10

// run is one goal being driven. Its goroutine owns g, conv and the guard; other goroutines
// reach it only through the mutex-guarded control fields.
type run struct {
	svc    *Service
	g      Goal
	paneID string // g.Spec.PaneID, fixed for the run: read without the run's own state
	conv   []llm.Message
	model  agent.Model
	critic agent.Model
	crit   criterion.Criterion
	policy policy.Policy
	// ag is the turn engine: requests, streaming, tool calls, guard, approvals.
	ag          *agent.Agent
	lastImage   *llm.Image
	activeSince time.Time

	ctx    context.Context
	cancel context.CancelCauseFunc
	done   chan struct{}
	// gone is closed once the run has left the service's table (after OnEnd): a finished
	// goal can be re-opened from then on.
	gone chan struct{}

	mu          sync.Mutex
	turnCancel  context.CancelCauseFunc
	turnClocked bool        // the wall clock cuts the current turn or call off
	clock       *time.Timer // fires when the active time is used up
	paused      bool
	steers      []string
	raise       *budgetRaise // a raised budget, applied by the loop when it wakes
	wake        chan struct{}

	// pend is what the next commit writes (owned by the loop goroutine).
	pend pending
	// saveErr is why the store refused the goal's progress: the run ends (errNotSaved).
	saveErr error
	// redo finishes the batch a restart interrupted while it waited for approval.
	redo []resumeCall

	// stepOf maps tool call ids to their step numbers, for stubs and cuts.
	stepOf map[string]int
	// turnUsage is the usage of the model turn whose calls are running, for its first step.
	turnUsage *llm.Usage

	// Set by the goal tools during a batch, read after it.
	claim *string
	abort *string
	halt  *string
}

func (r *run) signal() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// pause stops the current model stream or tool call and holds the loop until resume.
func (r *run) pause() {
	r.mu.Lock()
	r.paused = true
	if r.turnCancel != nil {
		r.turnCancel(agent.Paused)
	}
	r.mu.Unlock()
	r.signal()
}

func (r *run) resume() {
	r.mu.Lock()
	r.paused = false
	r.mu.Unlock()
	r.signal()
}

func (r *run) steer(text string) {
	r.mu.Lock()
	r.steers = append(r.steers, text)
	r.mu.Unlock()
	r.signal()
}

// turnContext is the context of one model turn or tool call: pause cancels it (agent.Paused),
// abort cancels its parent, and the wall clock running out cuts it off (agent.WallClock), as
// Ctrl+C would: a long MCP call or shell wait does not outlive the goal's time.
func (r *run) turnContext() (context.Context, func()) { return r.cutContext(true) }

// checkContext is turnContext for a check of a claim made in time (verification, the critic):
// a pause cuts it off, the wall clock does not.
func (r *run) checkContext() (context.Context, func()) { return r.cutContext(false) }

func (r *run) cutContext(clocked bool) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(r.ctx)
	r.mu.Lock()
	r.turnCancel, r.turnClocked = cancel, clocked
	r.mu.Unlock()
	if clocked && r.clockRanOut() {
		cancel(agent.WallClock)
	}
	return ctx, func() {
		r.mu.Lock()
		r.turnCancel = nil
		r.mu.Unlock()
		cancel(nil)
	}
}

// clockRanOut reports whether the goal's active time is used up.
func (r *run) clockRanOut() bool {
	wc := time.Duration(r.g.Spec.Settings.WallClock)
	return wc > 0 && r.elapsed() >= wc
}

// elapsed is the active wall-clock time the goal has used.
func (r *run) elapsed() time.Duration {
	d := time.Duration(r.g.State.ElapsedMS) * time.Millisecond
	if !r.activeSince.IsZero() {
		d += time.Since(r.activeSince)
	}
	return d
}

// stopClock banks the active time, for waits that should not use up the wall clock
// (paused, awaiting approval, over budget).
func (r *run) stopClock() {
	if !r.activeSince.IsZero() {
		r.g.State.ElapsedMS += time.Since(r.activeSince).Milliseconds()
		r.activeSince = time.Time{}
	}
	r.mu.Lock()
	if r.clock != nil {
		r.clock.Stop()
		r.clock = nil
	}
	r.mu.Unlock()
}

// startClock runs the active time again, and arms the wall clock to cut off what runs when
// the time is used up.
func (r *run) startClock() {
	if r.activeSince.IsZero() {
		r.activeSince = time.Now()
	}
	wc := time.Duration(r.g.Spec.Settings.WallClock)
	if wc <= 0 {
		return
	}
	left := max(wc-r.elapsed(), 0)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.clock != nil {
		r.clock.Stop()
	}
	r.clock = time.AfterFunc(left, func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.turnCancel != nil && r.turnClocked {
			r.turnCancel(agent.WallClock)
		}
	})
}

// loop drives the goal until it ends: the agent's loop, with the goal's hooks. It never
// returns with the goal still running.
func (r *run) loop() {
	defer close(r.done)
	r.startClock()
	if len(r.redo) > 0 {
		r.finishBatch(r.redo)
		r.redo = nil
		r.append(r.userText(resumeMarkerText))
		r.commit()
		if r.afterBatch() {
			return
		}
	}
	agent.Run(r.ctx, agent.Loop{Next: r.next, TurnContext: func(context.Context) (context.Context, func()) { return r.turnContext() },
		Failed: r.failed, Replied: r.replied, Idle: r.idle, Ran: r.ran})
}

// next is the goal's turn, once it has not ended, stopped at a limit or been paused.
func (r *run) next(context.Context) (*agent.Agent, agent.Turn, bool) {
	for {
		if status, report, ok := r.endedByContext(); ok {
			r.finish(status, report)
			return nil, agent.Turn{}, false
		}
		if stop, ok := agent.FirstStop(r.progress(), r.stopWhen()...); ok {
			r.finalTurn(stop.Why)
			return nil, agent.Turn{}, false
		}
		if !r.waitWhilePaused() {
			continue // the context ended while paused; the next pass ends the goal
		}
		if claim := r.g.State.Verifying; claim != nil {
			r.g.State.Verifying = nil
			if r.verify(*claim) {
				return nil, agent.Turn{}, false
			}
			continue
		}
		r.deliverSteers()
		return r.ag, r.turn(), true
	}
}

// failed: a pause or the goal's end cut the model call off (the next turn says which), or
// the call failed and so does the goal.
func (r *run) failed(_ llm.Reply, err error, _ error) bool {
	if errors.Is(err, agent.Paused) || errors.Is(err, agent.WallClock) || r.ctx.Err() != nil {
		return true
	}
	r.finish(StatusFailed, "The model call failed: "+err.Error())
	return false
}

// replied stores the reply; a reply that calls tools waits first for a budget it overspent.
//
// The reply is stored before calls that change something run, so that after a crash they are
// answered "interrupted by restart" rather than silently made again. Calls that only read
// change nothing: their reply is stored with their first step (or, without calls, with the
// nudge that follows), a commit fewer; a crash before that asks the model again.
func (r *run) replied(reply llm.Reply) bool {
	r.g.State.ModelTurns++
	r.addUsage(r.model, reply.Usage)
	u := reply.Usage
	r.turnUsage = &u
	r.append(reply.Message)
	calls := reply.Message.ToolCalls()
	if len(calls) > 0 && !r.onlyReads(calls) {
		r.commit()
	}
	if len(calls) > 0 && r.overBudget() {
		r.waitForBudget()
	}
	return true
}

// onlyReads reports whether every call is of a known tool at read_only for its arguments.
func (r *run) onlyReads(calls []llm.ToolCall) bool {
	for _, c := range calls {
		tool, ok := r.svc.registry.Get(c.Name)
		if !ok || c.ArgsError != "" {
			return false
		}
		if risk, _ := tools.RiskOf(tool, c.Args); risk != tools.ReadOnly {
			return false
		}
	}
	return true
}

// idle: the model cannot stop on its own; a reply without a tool call is told to go on.
func (r *run) idle(reply llm.Reply, said *agent.GuardDecision) bool {
	text := nudgeText
	if said != nil {
		text = said.Message + "\n\n" + nudgeText
	}
	r.append(r.userText(text))
	if stall := reply.Stall(); stall != "" {
		r.event(EventNotice, map[string]string{"message": stall})
	}
	r.commit()
	return true
}

// ran stores the batch's results and acts on what it asked for; false once the goal ended.
func (r *run) ran(b agent.Batch, said *agent.GuardDecision) bool {
	r.storeBatch(b)
	if said != nil && r.ctx.Err() == nil {
		r.append(r.userText(said.Message))
		r.commit()
	}
	return !r.afterBatch()
}

// stopWhen are the limits the goal stops at, asking the model for a final report.
func (r *run) stopWhen() []agent.StopCondition {
	s := r.g.Spec.Settings
	return []agent.StopCondition{agent.WallClockRunsOut(time.Duration(s.WallClock)), agent.StepCapReached(s.MaxSteps)}
}

func (r *run) progress() agent.Progress {
	return agent.Progress{Elapsed: r.elapsed(), Steps: r.g.State.Steps}
}

// afterBatch acts on what a batch of tool calls asked for: a guard halt, the agent's abort,
// a claim to verify, or a critic that is due. It returns true if the goal ended.
func (r *run) afterBatch() bool {
	switch {
	case r.halt != nil:
		r.finish(StatusAborted, *r.halt)
		return true
	case r.abort != nil:
		r.finish(StatusAborted, *r.abort)
		return true
	case r.claim != nil:
		rationale := *r.claim
		r.claim = nil
		if r.verify(rationale) {
			return true
		}
	}
	return r.criticDue() && r.runCritic()
}

// endedByContext reports how the goal ends if its context is done.
func (r *run) endedByContext() (Status, string, bool) {
	if r.ctx.Err() == nil {
		return "", "", false
	}
	switch cause := context.Cause(r.ctx); {
	case errors.Is(cause, errNotSaved):
		return StatusFailed, fmt.Sprintf("The goal stopped because its progress could not be saved (%v): "+
			"free disk space or fix the data dir, then restart the app and resume it; the steps after the last save are not in its story.", r.saveErr), true
	case errors.Is(cause, agent.Shutdown):
		return StatusInterrupted, "", true
	default:
		return StatusAborted, "Aborted by the user.", true
	}
}

// waitWhilePaused holds the loop while the user has paused the goal. It returns false if
// the context ended meanwhile.
func (r *run) waitWhilePaused() bool {
	r.mu.Lock()
	paused := r.paused
	r.mu.Unlock()
	if !paused {
		return true
	}
	return r.hold(StatusPaused, EventPaused, nil)
}

// hold shows status (announced with an event of type evType) and waits until the goal is
// let go (resume, or a raised budget) or its context ends, in which case it returns false.
// Time held does not count against the wall clock.
func (r *run) hold(status Status, evType string, data any) bool {
	r.stopClock()
	r.setStatus(status)
	r.event(evType, data)
	r.commit()
	for {
		select {
		case <-r.wake:
		case <-r.ctx.Done():
			return false
		}
		r.mu.Lock()
		paused := r.paused
		raise := r.raise
		r.raise = nil
		r.mu.Unlock()
		if raise != nil {
			if raise.usd > 0 {
				r.g.Spec.Settings.BudgetUSD = raise.usd
			}
			if raise.tokens > 0 {
				r.g.Spec.Settings.BudgetTokens = raise.tokens
			}
		}
		if !paused {
			r.startClock()
			r.setStatus(StatusRunning)
			r.event(EventResumed, nil)
			r.commit()
			return true
		}
	}
}

func (r *run) deliverSteers() {
	r.mu.Lock()
	steers := r.steers
	r.steers = nil
	r.mu.Unlock()
	for _, s := range steers {
		r.append(r.userText(s))
	}
	if len(steers) > 0 {
		r.commit()
	}
}

func (r *run) userText(s string) llm.Message { return llm.UserText(s) }

// turn is the next model turn: the stable system prompt, the conversation, and the checklist
// and declared step as they are now in the per-turn context message.
func (r *run) turn(extra ...llm.Message) agent.Turn {
	perTurn := turnContext(r.g.State.Todos, r.g.State.ActiveTodo, r.g.State.Declared)
	if f := r.svc.opts.PaneSummary; f != nil {
		// Live, so it rides in the per-turn message, never in the cached prefix.
		if panes := f(r.ctx, r.g.Spec.PaneID); panes != "" {
			perTurn = strings.TrimSpace(panes + "\n" + perTurn)
		}
	}
	// The conversation is handed over as it is (capped, so extra never writes into it): the
	// agent only reads what was appended since its last turn (agent/view.go).
	return agent.Turn{System: systemPrompt, Messages: append(r.conv[:len(r.conv):len(r.conv)], extra...), Context: perTurn}
}

func (r *run) addUsage(m agent.Model, u llm.Usage) {
	r.g.State.Usage = r.g.State.Usage.Add(u)
	r.g.State.CostUSD += m.Cost(u)
}

// finalTurn asks the model, with no tools, to explain where things stand; its words become
// the report of a failed goal.
// An abort or a shutdown while it streams cuts it off: the goal then ends as they say.
func (r *run) finalTurn(reason string) {
	ctx, cancel := context.WithTimeout(r.ctx, finalTurnTimeout)
	defer cancel()
	t := r.turn(r.userText(fmt.Sprintf(finalTurnText, reason)))
	report := "Stopped: " + reason + "."
	if reply, err := r.ag.Answer(ctx, t); err == nil {
		r.addUsage(r.model, reply.Usage)
		if text := reply.Message.Text(); text != "" {
			report = "Stopped: " + reason + ".\n\n" + text
		}
	}
	if status, why, ended := r.endedByContext(); ended {
		r.finish(status, why)
		return
	}
	r.finish(StatusFailed, report)
}

// overBudget reports whether the goal has spent its token or dollar budget.
func (r *run) overBudget() bool {
	s := r.g.Spec.Settings
	return (s.BudgetTokens > 0 && r.g.State.Usage.Total() >= s.BudgetTokens) ||
		(s.BudgetUSD > 0 && r.g.State.CostUSD >= s.BudgetUSD)
}

// waitForBudget pauses the goal (not a failure) until the user raises the budget, resumes
// anyway, or stops it.
func (r *run) waitForBudget() {
	r.mu.Lock()
	r.paused = true
	r.mu.Unlock()
	r.hold(StatusBudgetExceeded, EventStatus, map[string]any{"status": StatusBudgetExceeded,
		"tokens": r.g.State.Usage.Total(), "costUsd": r.g.State.CostUSD,
		"message": "the goal reached its budget: raise it to continue, or abort it"})
}

type budgetRaise struct {
	usd    float64
	tokens int
}

// raiseBudget sets a new budget (0 keeps that part) and lets a goal held for budget go on.
// It runs on another goroutine; the loop applies the raise when it wakes.
func (r *run) raiseBudget(usd float64, tokens int) {
	r.mu.Lock()
	r.raise = &budgetRaise{usd: usd, tokens: tokens}
	r.paused = false
	r.mu.Unlock()
	r.signal()
}

// append adds messages to the conversation; commit writes them.
func (r *run) append(msgs ...llm.Message) { r.conv = append(r.conv, msgs...) }

// pending holds what the next commit writes.
type pending struct {
	messagesFrom int
	steps        []Step
	events       []Event
}

func (r *run) event(typ string, data any) {
	r.pend.events = append(r.pend.events, Event{Type: typ, Data: mustJSON(data)})
}

func (r *run) setStatus(s Status) {
	r.g.Status = s
}

// commit writes the conversation tail, steps, events and the goal row in one transaction,
// then publishes the events. Nothing reaches a UI before it is in the store.
func (r *run) commit() {
	p := &r.pend
	r.g.UpdatedAt = time.Now().UTC()
	g := r.g
	g.State.ElapsedMS = r.elapsed().Milliseconds()
	c := &Commit{Goal: &g, Messages: r.conv[p.messagesFrom:], MessagesFrom: p.messagesFrom, Steps: p.steps, Events: p.events}
	err := r.svc.repo.CommitGoal(context.WithoutCancel(r.ctx), c)
	if err != nil && r.saveErr == nil {
		// Once more after a moment: a busy database lets go soon; a full disk does not.
		time.Sleep(saveRetryDelay)
		err = r.svc.repo.CommitGoal(context.WithoutCancel(r.ctx), c)
	}
	if err != nil {
		r.svc.log.Error("goal: could not save progress", "goal", r.g.ID, "err", err)
		if r.saveErr == nil {
			// Going on would do work the store does not know of: the goal stops, and says so.
			r.saveErr = err
			r.cancel(errNotSaved)
		}
		return
	}
	p.messagesFrom, p.steps, p.events = len(r.conv), nil, nil
	for _, e := range c.Events {
		r.svc.publishStored(e)
	}
}

// finish ends the goal, saving and announcing it.
func (r *run) finish(status Status, report string) {
	r.stopClock()
	now := time.Now().UTC()
	r.g.Status = status
	if status.Finished() {
		report = endWorktree(&r.g, report)
	}
	r.g.Report = report
	if status != StatusInterrupted {
		r.g.EndedAt = &now
	}
	ended := map[string]any{"status": status, "report": report}
	if status == StatusInterrupted {
		r.event(EventStatus, map[string]any{"status": status})
	} else {
		r.event(EventEnded, ended)
	}
	r.commit()
	if r.saveErr != nil {
		// The store has not taken the end either: the doors and the fleet learn it from the
		// service (Service.Wait), and the window from this event.
		for _, e := range r.pend.events {
			e.GoalID, e.At = r.g.ID, time.Now().UTC()
			r.svc.publishLive(e)
		}
		r.svc.unsaved(r.g)
	}
}

func mustJSON(v any) json.RawMessage {
	if v == nil {
		return json.RawMessage("{}")
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("goal: event data %T does not encode: %v", v, err))
	}
	return b
}

var _ tools.GoalControl = (*run)(nil)

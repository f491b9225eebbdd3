package agent

import (
	"context"
	"errors"

	"github.com/clusterspace/clusterspace/backend/llm"
)

// Why a piece of work's context ended. Every owner cancels its contexts with one of these as
// the cause, and each hook reads it (context.Cause) to decide what the end means: a pause
// resumes what it interrupted, a stop ends the work, a shutdown leaves it to resume.
var (
	// Paused: the person paused the work; what was cut off is done again on resume.
	Paused = errors.New("paused")
	// Stopped: the person stopped (aborted) the work.
	Stopped = errors.New("stopped by the person")
	// Shutdown: the app is closing; the work is put away to resume in the next process.
	Shutdown = errors.New("the app is shutting down")
	// WallClock: the work's wall clock ran out while a turn or a call ran.
	WallClock = errors.New("the wall clock ran out")
	// ParentGone: the work this belonged to (a fleet, a conversation) is gone.
	ParentGone = errors.New("the work it belonged to ended")
)

// CauseOf is why ctx ended (nil while it runs): one of the causes above, or whatever else
// ended it.
func CauseOf(ctx context.Context) error {
	if ctx.Err() == nil {
		return nil
	}
	return context.Cause(ctx)
}

// Loop is what one piece of work adds to the turn engine's loop: a goal, a chat (its actor and
// its critic), a fleet task's goal. Run owns the turn — request, stream, the words, each call
// decided and run, the record — and asks the hooks at the points where the work decides. A
// hook that returns false ends the run; the work says, in the hook, how it ended.
type Loop struct {
	// Next is asked before every turn: the work's stop conditions, pause and steering, queued
	// messages. It returns the agent whose turn it is (a chat's actor or critic) and the turn
	// to send, or false to end the run.
	Next func(ctx context.Context) (*Agent, Turn, bool)
	// TurnContext is the context one model turn streams under, and its release (a pause
	// cancels it with Paused without ending the run). nil: ctx.
	TurnContext func(ctx context.Context) (context.Context, func())
	// Failed is told a model call that failed, with what arrived before; the turn's context
	// cause (if it ended) says why. It returns true to go on (a pause), false to end.
	Failed func(reply llm.Reply, err error, cause error) bool
	// Replied hands over a reply before its calls run: the work stores it. false ends.
	Replied func(reply llm.Reply) bool
	// Idle is told a reply that called no tool; said is the guard's note on its words (nil:
	// none). It returns true to go on with another turn.
	Idle func(reply llm.Reply, said *GuardDecision) bool
	// Ran is told what the reply's calls did; said as in Idle. It returns true to go on.
	Ran func(b Batch, said *GuardDecision) bool
}

// Run drives the work's turns until a hook ends it.
func Run(ctx context.Context, l Loop) {
	for {
		a, t, ok := l.Next(ctx)
		if !ok {
			return
		}
		reply, err := a.turn(ctx, l, t)
		if err != nil {
			if l.Failed == nil || !l.Failed(reply, err, CauseOf(ctx)) {
				return
			}
			continue
		}
		if l.Replied != nil && !l.Replied(reply) {
			return
		}
		// Words that claim work no tool did earn the guard's note.
		said := a.CheckWords(reply.Message)
		calls := reply.Message.ToolCalls()
		if len(calls) == 0 {
			if l.Idle == nil || !l.Idle(reply, said) {
				return
			}
			continue
		}
		if t.NoTools {
			// It was offered none: a stray call means nothing, and the work reads only words.
			if l.Idle == nil || !l.Idle(reply, said) {
				return
			}
			continue
		}
		if !l.Ran(a.RunCalls(ctx, calls), said) {
			return
		}
	}
}

// turn streams one turn under the loop's turn context; an error caused by that context's end
// carries its cause.
func (a *Agent) turn(ctx context.Context, l Loop, t Turn) (llm.Reply, error) {
	tctx, done := ctx, func() {}
	if l.TurnContext != nil {
		tctx, done = l.TurnContext(ctx)
	}
	defer done()
	reply, err := a.Stream(tctx, t)
	if err != nil && tctx.Err() != nil {
		if cause := context.Cause(tctx); cause != nil && !errors.Is(err, cause) {
			err = errors.Join(cause, err)
		}
	}
	return reply, err
}

// Answer streams one turn that must answer in words (no tools): a final report, a critic's
// review, a judge. It is the one way a piece of work asks its model outside Run.
func (a *Agent) Answer(ctx context.Context, t Turn) (llm.Reply, error) {
	t.NoTools = true
	return a.Stream(ctx, t)
}

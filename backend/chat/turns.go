package chat

import (
	"context"
	"fmt"
	"strings"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/llm"
)

// The chat's hooks on the agent's loop (agent.Run): whose turn is next (the actor, or in
// critic mode the critic, which is offered no tools), what is stored of each reply, and when a
// chain stops.

// nextTurn is the next turn of the chain: queued messages start a new one; a stop, the end of
// the chain or the person editing a message ends the run.
func (r *run) nextTurn(context.Context) (*agent.Agent, agent.Turn, bool) {
	for {
		if r.ctx.Err() != nil {
			r.end(ReasonStopped, stoppedText(context.Cause(r.ctx)))
			return nil, agent.Turn{}, false
		}
		if queued := r.ss.takeQueue(); len(queued) > 0 {
			if r.open && r.auto {
				r.end(ReasonUserMessage, "")
			}
			if !r.appendUser(queued) {
				return nil, agent.Turn{}, false
			}
			r.begin(SourceActor)
			r.next = SourceActor
			continue
		}
		if r.next == "" {
			r.end(ReasonDone, "") // no-op unless a path forgot to say why
			return nil, agent.Turn{}, false
		}
		if r.auto && r.ss.isEditing() {
			r.end(ReasonEditing, "")
			return nil, agent.Turn{}, false
		}
		src := r.next
		r.auto = true
		cfg := r.config()
		a, err := r.agent(src, cfg)
		if err != nil {
			if r.ctx.Err() == nil {
				r.next = r.fail(err)
			}
			continue // a stop is reported at the top
		}
		var t agent.Turn
		if src == SourceCritic {
			msgs := append([]llm.Message{llm.UserText(criticOpening)}, CriticView(r.conv)...)
			t = agent.Turn{System: criticSystem(actorSystem(cfg.CriticMode), cfg.CriticPrompt), Messages: msgs, NoTools: true}
		} else {
			t = agent.Turn{System: actorSystem(cfg.CriticMode), Messages: ActorView(r.conv)}
			if f := r.svc.paneSummary; f != nil {
				t.Context = f(r.ctx, r.ss.wsID) // live: in the newest message, not the cached prefix
			}
		}
		r.cur, r.turnID = src, agent.NewID("turn-")
		r.ss.setTurn(src)
		r.publish(Event{Type: EventMessageStarted, Source: src, Turn: r.turnID})
		return a, t, true
	}
}

// failed keeps what a cut-off reply produced; a model call that failed ends the chain with a
// note, a stop is reported by the next turn.
func (r *run) failed(reply llm.Reply, err error, _ error) bool {
	r.ss.setTurn("")
	r.savePartial(r.cur, r.turnID, reply.Message)
	if r.ctx.Err() == nil {
		r.next = r.fail(err)
	}
	return true
}

// replied stores the reply (a critic's without calls: it was offered none).
func (r *run) replied(reply llm.Reply) bool {
	r.ss.setTurn("")
	msg := reply.Message
	if r.cur == SourceCritic {
		msg = withoutToolCalls(msg)
	}
	return r.append(Message{Source: r.cur, Message: msg}, r.turnID)
}

// idle: an actor reply without calls ends the chain, or goes to the critic in critic mode; a
// critic's review goes back to the actor, or /done ends the chain.
func (r *run) idle(reply llm.Reply, _ *agent.GuardDecision) bool {
	if r.cur == SourceCritic {
		r.next = r.review(reply)
		return true
	}
	if stall := reply.Stall(); stall != "" {
		r.publish(Event{Type: EventNotice, Text: stall})
	}
	if r.config().CriticMode {
		r.next = SourceCritic
		return true
	}
	r.end(ReasonDone, "")
	r.next = ""
	return true
}

// review reads the critic's reply: feedback goes back to the actor, /done ends the chain.
func (r *run) review(reply llm.Reply) Source {
	r.iterations++
	seq := r.conv[len(r.conv)-1].Seq
	capN := max(1, r.cfg.Settings.IterationCap)
	verdict := &Verdict{Done: IsDone(reply.Message), Seq: seq, Iteration: r.iterations, Cap: capN}
	switch {
	case verdict.Done:
		r.publish(Event{Type: EventCriticVerdict, Source: SourceCritic, Verdict: verdict})
		r.end(ReasonDone, "")
		return ""
	case strings.TrimSpace(reply.Message.Text()) == "":
		return r.stopWithNote(ReasonStreamFailed, emptyCriticNote)
	}
	r.publish(Event{Type: EventCriticVerdict, Source: SourceCritic, Verdict: verdict})
	if _, stop := agent.FirstStop(agent.Progress{CriticRounds: r.iterations}, agent.CriticRoundsReached(capN)); stop {
		return r.stopWithNote(ReasonIterationCap, fmt.Sprintf(iterationCapNote, r.iterations))
	}
	r.toolTurns = 0 // the feedback is a new user-role message for the actor
	return SourceActor
}

// ran stores the actor's tool results, the guard's note on its words (said) with them, and
// decides whether the chain goes on: a halt, failing batches or the turn cap stop it.
func (r *run) ran(b agent.Batch, said *agent.GuardDecision) bool {
	if said != nil && len(b.Results) > 0 {
		last := &b.Results[len(b.Results)-1]
		last.Text += "\n\n" + said.Message
	}
	if !r.append(Message{Source: SourceActor, Message: llm.ToolMessage(b.Results...)}, "") {
		return false
	}
	r.next = r.afterCalls(b)
	return true
}

func (r *run) afterCalls(b agent.Batch) Source {
	if b.Failed {
		r.failStreak++
	} else {
		r.failStreak = 0
	}
	if r.ctx.Err() != nil {
		return SourceActor // the next turn reports the stop
	}
	if b.Halt != nil {
		return r.stopWithNote(ReasonGuard, fmt.Sprintf(guardNote, b.Halt.Message))
	}
	progress := agent.Progress{ToolTurns: r.toolTurns, FailingBatches: r.failStreak}
	if stop, ok := agent.FirstStop(progress, agent.ToolBatchesKeepFailing(maxFailingBatches), agent.ToolTurnCapReached(maxToolTurns)); ok {
		if stop.Rule == "tool_failures" {
			return r.stopWithNote(ReasonToolFailures, fmt.Sprintf(toolFailuresNote, r.failStreak))
		}
		return r.stopWithNote(ReasonTurnCap, fmt.Sprintf(turnCapNote, r.toolTurns))
	}
	r.toolTurns++
	return SourceActor
}

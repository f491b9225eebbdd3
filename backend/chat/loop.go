package chat

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/llm"
)

// run is one conversation's loop goroutine: it owns conv (the stored conversation as it grows)
// and talks to the controls only through the session's mutex-guarded fields.
type run struct {
	ss   *session
	svc  *Service
	ctx  context.Context
	conv []Message
	cfg  Config

	agents map[Source]madeAgent // the actor's and the critic's, made on first use
	turnID string               // the streamed message under way, for its deltas
	next   Source               // whose turn is next ("" ends the chain)
	cur    Source               // whose turn is streaming or just streamed

	// A chain is what one user message (or a Resume) sets off: actor turns, tool turns and,
	// in critic mode, critic reviews, until a stop reason. open: loop_started was published
	// and loop_stopped not yet. auto: the next turn is automatic, not the chain's first.
	open, auto bool
	toolTurns  int // automatic tool turns since the actor last got a user-role message
	failStreak int // failing tool batches in a row
	iterations int // critic reviews in this chain
}

// drive runs chains until nothing is due and no user message waits, then marks the session
// idle. Messages still queued when the loop was stopped are stored unanswered.
func (ss *session) drive(r *run, cancel context.CancelCauseFunc, next Source) {
	defer ss.svc.wg.Done()
	defer cancel(nil)
	for {
		r.loop(next)
		next = ""
		ss.mu.Lock()
		if len(ss.queue) > 0 && r.ctx.Err() == nil {
			ss.mu.Unlock()
			continue
		}
		if leftover := ss.queue; len(leftover) > 0 {
			ss.queue = nil
			ss.mu.Unlock()
			r.appendUser(leftover)
			continue // the ended context brings the loop straight back here
		}
		ss.running, ss.chain, ss.cancel, ss.turn = false, false, nil, ""
		ss.notify()
		close(ss.done)
		ss.mu.Unlock()
		return
	}
}

// loop runs turns from next until the chain ends and no queued message starts another: the
// agent's loop, with the chat's hooks (turns.go).
func (r *run) loop(next Source) {
	defer func() {
		if p := recover(); p != nil {
			r.svc.log.Error("chat loop panicked", "conversation", r.ss.id, "panic", p)
			r.end(ReasonStreamFailed, fmt.Sprintf("internal error (%v); resume to try again", p))
		}
	}()
	if next != "" {
		r.begin(next)
	}
	r.next = next
	agent.Run(r.ctx, agent.Loop{Next: r.nextTurn, Failed: r.failed, Replied: r.replied, Idle: r.idle, Ran: r.ran})
}

// begin opens a chain (or restarts the counters of one that has not run a turn yet).
func (r *run) begin(first Source) {
	r.toolTurns, r.failStreak, r.iterations, r.auto = 0, 0, 0, false
	// A new message is news to the actor: what it repeated before may now be right.
	if made, ok := r.agents[SourceActor]; ok {
		made.Guard = agent.NewGuard()
	}
	if r.open {
		return
	}
	r.open = true
	r.ss.setChain(true)
	r.publish(Event{Type: EventLoopStarted, Source: first})
}

// end closes the chain with its reason, once.
func (r *run) end(reason StopReason, text string) {
	if !r.open {
		return
	}
	r.open = false
	r.ss.setChain(false) // before the event, so a UI reading State on it sees the chat idle
	ev := Event{Type: EventLoopStopped, Reason: reason, Text: text}
	// The state rides along (what Resume would start, above all), so a UI need not read the
	// whole conversation again to learn it.
	if st, err := r.svc.State(context.WithoutCancel(r.ctx), r.ss.id); err == nil {
		ev.State = &st
	}
	r.publish(ev)
}

func stoppedText(cause error) string {
	switch {
	case errors.Is(cause, errShutdown):
		return "the app is shutting down; resume the chat to continue"
	case errors.Is(cause, errCleared):
		return "the conversation was cleared"
	case errors.Is(cause, errDeleted):
		return "the conversation was deleted"
	}
	return "stopped by the user"
}

func (r *run) publish(e Event) {
	e.ConversationID, e.WorkspaceID = r.ss.id, r.ss.wsID
	r.svc.publish(e)
}

// config re-reads the stored config, so a toggle or a new critic prompt applies at the
// next turn; on a read error the last one read stands.
func (r *run) config() Config {
	cfg, err := r.svc.repo.ChatConfig(context.WithoutCancel(r.ctx), r.ss.id)
	if err != nil {
		r.svc.log.Warn("chat: could not read the settings", "conversation", r.ss.id, "err", err)
		if r.cfg.ConversationID == "" {
			return Config{ConversationID: r.ss.id, WorkspaceID: r.ss.wsID, Settings: DefaultSettings()}
		}
		return r.cfg
	}
	r.cfg = cfg
	return cfg
}

// agent returns the actor's or the critic's turn engine. It is made again when the settings
// that shape it (model, persona, skills) differ from those it was made from, so a change
// applies at the next turn, even one made while the loop was winding down after a stop (a
// message sent then is queued into that same loop). The compaction state lives in the
// session, so a remade agent loses nothing summarised.
func (r *run) agent(src Source, cfg Config) (*agent.Agent, error) {
	shape := agentShape(src, cfg.Settings)
	if made, ok := r.agents[src]; ok && made.shape == shape {
		return made.Agent, nil
	}
	ref := cfg.Settings.Provider
	if src == SourceCritic {
		ref = criticRef(cfg)
	}
	m, err := r.svc.models.Model(r.ctx, ref)
	if err != nil {
		return nil, fmt.Errorf("the %s's model cannot be used: %w", src, err)
	}
	// The conversation's model goes with its provider: a critic on another provider keeps
	// that provider's own.
	if model := cfg.Settings.Model; model != "" && (src == SourceActor || cfg.Settings.CriticProvider == "") {
		m = withModel(m, model)
	}
	a := r.newAgent(src, m)
	if src == SourceActor {
		sh, err := r.svc.persona(cfg.Settings)
		if err != nil {
			return nil, err
		}
		sh.apply(a)
	}
	r.agents[src] = madeAgent{a, shape}
	return a, nil
}

// madeAgent is a turn engine with the settings it was made from (agentShape): a changed model
// or persona makes it again.
type madeAgent struct {
	*agent.Agent
	shape string
}

// agentShape is what of the settings goes into src's agent: when it changes between turns,
// the agent is made again.
func agentShape(src Source, s Settings) string {
	if src == SourceCritic {
		return strings.Join([]string{s.CriticProvider, s.Provider, s.Model}, "\x00")
	}
	return strings.Join(append([]string{s.Provider, s.Model, s.Persona}, s.Skills...), "\x00")
}

// savePartial keeps what a cut-off stream produced, without its tool calls (they never
// ran). Nothing is stored if nothing arrived.
func (r *run) savePartial(src Source, turn string, msg llm.Message) {
	msg = withoutToolCalls(msg)
	if msg.Text() == "" && msg.Reasoning() == "" {
		r.publish(Event{Type: EventMessageFinished, Source: src, Turn: turn})
		return
	}
	r.append(Message{Source: src, Message: msg, Partial: true}, turn)
}

func withoutToolCalls(m llm.Message) llm.Message {
	out := llm.Message{Role: m.Role}
	for _, p := range m.Parts {
		if p.Kind != llm.PartToolCall {
			out.Parts = append(out.Parts, p)
		}
	}
	return out
}

// append stores one message and publishes it. If the store fails the chain ends: going on
// would show the person a conversation the store does not have.
func (r *run) append(m Message, turn string) bool {
	m.ConversationID, m.WorkspaceID = r.ss.id, r.ss.wsID
	batch := []Message{m}
	if err := r.svc.repo.AppendChatMessages(context.WithoutCancel(r.ctx), r.ss.id, batch); err != nil {
		r.svc.log.Error("chat: could not save a message", "conversation", r.ss.id, "err", err)
		r.publish(Event{Type: EventMessageFinished, Source: m.Source, Turn: turn})
		r.end(ReasonStreamFailed, "could not save the conversation: "+err.Error())
		return false
	}
	r.conv = append(r.conv, batch[0])
	r.publish(Event{Type: EventMessageFinished, Source: m.Source, Turn: turn, Message: &batch[0]})
	return true
}

// appendUser stores queued user messages, in order.
func (r *run) appendUser(msgs []llm.Message) bool {
	for _, m := range msgs {
		if !r.append(Message{Source: SourceUser, Message: m}, "") {
			return false
		}
	}
	return true
}

// fail ends the chain after a failed model call, with a note saying what happened.
func (r *run) fail(err error) Source {
	return r.stopWithNote(ReasonStreamFailed, fmt.Sprintf(streamFailedNote, strings.TrimSuffix(err.Error(), ".")))
}

// stopWithNote stores a note for the person and ends the chain with reason.
func (r *run) stopWithNote(reason StopReason, note string) Source {
	r.append(Message{Source: SourceNote, Message: llm.AssistantText(note)}, "")
	r.end(reason, note)
	return ""
}

func (ss *session) takeQueue() []llm.Message {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	q := ss.queue
	ss.queue = nil
	return q
}

func (ss *session) isEditing() bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.editing
}

func (ss *session) setChain(open bool) {
	ss.mu.Lock()
	ss.chain = open
	ss.notify()
	ss.mu.Unlock()
}

func (ss *session) setTurn(src Source) {
	ss.mu.Lock()
	ss.turn = src
	ss.mu.Unlock()
}

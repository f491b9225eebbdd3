package goal

import (
	"context"
	"fmt"
	"time"

	"github.com/clusterspace/clusterspace/backend/llm"
)

// launch registers a run for g and starts the goroutine that drives it. conv is the
// conversation of a resumed goal (nil for a new one), of which the first stored messages are
// in the store already: what follows them (the answers a repair gave to calls a crash left
// open, the resume marker) is written by the first commit, so a second crash finds them.
// Called with s.mu held: it does no I/O, so the lock is held for the bookkeeping only; the
// run's goroutine resolves its models and opens its terminal (prepare).
func (s *Service) launch(g Goal, conv []llm.Message, stored int, redo ...resumeCall) error {
	rctx, cancel := context.WithCancelCause(s.ctx)
	r := &run{svc: s, g: g, paneID: g.Spec.PaneID, policy: g.Spec.Policy,
		ctx: rctx, cancel: cancel, done: make(chan struct{}), gone: make(chan struct{}), wake: make(chan struct{}, 1), redo: redo, stepOf: map[string]int{}}
	prior := g.Status
	r.g.Status = StatusRunning
	s.runs[g.ID] = r
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer func() {
			if p := recover(); p != nil {
				s.log.Error("goal runner panicked", "goal", g.ID, "panic", p)
				r.finish(StatusFailed, fmt.Sprintf("The runner hit an internal error (%v); the goal stopped. Re-open or retry it.", p))
			}
			if s.opts.OnEnd != nil {
				s.opts.OnEnd(r.g)
			}
			s.mu.Lock()
			delete(s.runs, g.ID)
			close(r.gone)
			s.schedule()
			s.mu.Unlock()
			s.prune(context.Background())
		}()
		if err := r.prepare(conv, stored); err != nil {
			r.startFailed(prior, err)
			return
		}
		r.commit()
		r.loop()
	}()
	return nil
}

// prepare resolves the run's models, criterion and persona, and runs OnStart (the goal's
// terminal), on the run's own goroutine: slow work outside the service's lock.
func (r *run) prepare(conv []llm.Message, stored int) error {
	s, g := r.svc, r.g
	model, err := s.models.Model(r.ctx, g.Spec.Settings.Provider)
	if err != nil {
		return err
	}
	critic, err := s.models.Model(r.ctx, s.criticRef(g.Spec))
	if err != nil {
		return err
	}
	if w := g.Spec.Settings.ContextWindow; w > 0 {
		model.Window = w
	}
	crit, err := s.parseCriterion(r.ctx, g.Spec)
	if err != nil {
		return err
	}
	r.model, r.critic, r.crit = model, critic, crit
	if err := r.reAddWorktree(); err != nil {
		return err
	}
	if conv != nil && g.State.Steps > 0 {
		// A resumed goal names its steps in stubs and cuts as before.
		if steps, err := s.repo.GoalSteps(r.ctx, g.ID, 0, g.State.Steps); err == nil {
			for _, st := range steps {
				r.stepOf[st.CallID] = st.Index
			}
		}
	}
	r.ag = r.newAgent()
	if persona, skills, err := s.persona(g.Spec); err != nil {
		return fmt.Errorf("%w (the goal names it; restore the file in the config dir to run it)", err)
	} else if g.Spec.Persona != "" || len(skills) > 0 {
		persona.Apply(r.ag, skills...)
	}
	var events []Event
	// OnStart runs for resumed goals too: after a restart their terminal must exist again.
	if s.opts.OnStart != nil {
		notices, err := s.opts.OnStart(r.ctx, g)
		if err != nil {
			return err
		}
		for _, n := range notices {
			events = append(events, Event{Type: EventNotice, Data: mustJSON(map[string]string{"message": n})})
		}
	}
	if conv == nil {
		r.append(llm.UserText(goalPrompt(g.Spec, crit.Describe(), g.Spec.Policy)))
		now := time.Now().UTC()
		r.g.StartedAt = &now
		started := map[string]any{"goal": g.Spec.Goal, "criterion": crit.Describe(), "model": model.ModelID}
		if g.Spec.Persona != "" {
			started["persona"] = g.Spec.Persona
		}
		if len(g.Spec.Skills) > 0 {
			started["skills"] = g.Spec.Skills
		}
		events = append(events, Event{Type: EventStarted, Data: mustJSON(started)})
	} else {
		r.conv = conv
		r.pend.messagesFrom = min(stored, len(conv))
		events = append(events, Event{Type: EventResumed, Data: mustJSON(map[string]string{"message": "resumed with its prior context"})})
	}
	r.pend.events = append(r.pend.events, events...)
	return nil
}

// canRun refuses, before anything is changed, a goal that could not run: its models, its
// criterion or its persona cannot be had. (prepare finds the same again on the run's own
// goroutine; this answers the person who asked to resume or re-open it at once.)
func (s *Service) canRun(ctx context.Context, g Goal) error {
	if _, err := s.models.Model(ctx, g.Spec.Settings.Provider); err != nil {
		return err
	}
	if _, err := s.models.Model(ctx, s.criticRef(g.Spec)); err != nil {
		return err
	}
	if _, err := s.parseCriterion(ctx, g.Spec); err != nil {
		return err
	}
	if _, _, err := s.persona(g.Spec); err != nil {
		return fmt.Errorf("%w (the goal names it; restore the file in the config dir to run it)", err)
	}
	return nil
}

// startFailed ends a run that could not start. A new goal fails, saying why; a resumed one
// keeps the status it had (it stays resumable once the cause is fixed) and its story says why.
// A start cut off by an abort ends the goal aborted; by a shutdown, leaves it as it was.
func (r *run) startFailed(prior Status, err error) {
	defer close(r.done)
	if status, why, ended := r.endedByContext(); ended {
		if status == StatusAborted {
			r.finish(status, why)
			return
		}
		r.g.Status = prior
		r.commit()
		return
	}
	if prior == StatusPending {
		r.finish(StatusFailed, "Could not start: "+err.Error())
		return
	}
	r.g.Status = prior
	r.event(EventNotice, map[string]string{"message": "the goal could not be resumed: " + err.Error()})
	r.commit()
}

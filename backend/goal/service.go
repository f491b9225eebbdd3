package goal

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/catalog"
	"github.com/clusterspace/clusterspace/backend/goal/criterion"
	"github.com/clusterspace/clusterspace/backend/policy"
	"github.com/clusterspace/clusterspace/backend/pubsub"
	"github.com/clusterspace/clusterspace/backend/tools"
)

// Service limits. Three goals at once keeps a 2-core machine responsive while terminals and
// browsers work; fifty kept goals is a long afternoon of history.
const (
	DefaultMaxConcurrent = 3
	DefaultMaxGoals      = 50
)

// MinContextWindow is the smallest window a goal accepts: the tools, the goal prompt, a
// summary and a few turns must fit.
const MinContextWindow = 4096

// endedPublishTimeout bounds how long the "ended" event waits for slow subscribers.
const endedPublishTimeout = 2 * time.Second

// Models resolves provider references ("" = the default, "critic" = the critic default, or
// a provider id or name) to callable models.
type Models interface {
	Model(ctx context.Context, ref string) (agent.Model, error)
}

// Options tune the service; zero values take defaults.
type Options struct {
	MaxConcurrent int
	MaxGoals      int
	Logger        *slog.Logger
	// AutoApprove answers approvals without asking (CLI --approve allow|deny).
	AutoApprove agent.AutoAnswer
	// Approvals is the approval desk shared with the chat, so either answers from one place;
	// nil: the service keeps its own (with AutoApprove).
	Approvals *agent.Approvals
	// PaneExists validates a goal's pane at start; nil accepts any non-empty id.
	PaneExists func(paneID string) bool
	// Visual is the visual-criterion check, supplied by the browser layer (nil: unavailable).
	Visual func(ctx context.Context, paneID, question string) (criterion.Verdict, error)
	// DefaultBudgetUSD and DefaultBudgetTokens apply to goals that name no budget (0 = none).
	DefaultBudgetUSD    float64
	DefaultBudgetTokens int
	// Screenshot returns a small JPEG of a browser pane, attached to the model's context after
	// browser actions when the model has vision (nil: none are attached).
	Screenshot func(ctx context.Context, paneID string) ([]byte, error)
	// PaneSummary describes the workspace around the goal's pane, for the newest message of
	// each turn (nil: none).
	PaneSummary func(ctx context.Context, paneID string) string
	// OnStart runs before a goal's first step (e.g. confining its terminal to the sandbox).
	// It returns notices for the goal's story; an error fails the goal's start.
	OnStart func(ctx context.Context, g Goal) ([]string, error)
	// OnEnd runs when a goal's run ends, however it ends (finished, paused by a shutdown,
	// failed to start): what OnStart set up for it (a proxy, its panes' boundary) is released.
	OnEnd func(g Goal)
	// Hidden lists what no confined goal may touch, whoever allows it: the app's data dirs,
	// config dir and secret files. A tool call naming a path there is refused.
	Hidden func() []string
	// Confine wraps a check the model wrote in the goal's sandbox (see criterion.Evidence);
	// nil: such a check of a confined goal cannot run.
	Confine func(g Goal, argv []string) (confined, env []string, err error)
	// Catalog holds the personas and skills a goal may name (nil: a goal naming one is refused).
	Catalog *catalog.Catalog
}

// Service runs goals: it validates and queues them, drives each in its own goroutine, and
// answers the dashboard's and the CLI's controls.
type Service struct {
	repo      Repo
	models    Models
	registry  *tools.Registry
	events    *pubsub.Broker[Event]
	approvals *agent.Approvals
	opts      Options
	log       *slog.Logger

	mu    sync.Mutex
	runs  map[string]*run
	queue []string
	sched schedState // the scheduler's memory beside the queue (schedule.go)
	// lost holds goals that ended while the store refused their progress: their end is
	// known here only (Wait and Get answer with it) until the app restarts.
	lost map[string]Goal

	ctx    context.Context
	cancel context.CancelCauseFunc
	wg     sync.WaitGroup
}

// NewService returns the service. Goals the last process left running are marked
// interrupted (resumable); goals still pending are queued again.
func NewService(ctx context.Context, repo Repo, models Models, registry *tools.Registry, events *pubsub.Broker[Event], opts Options) (*Service, error) {
	if opts.MaxConcurrent <= 0 {
		opts.MaxConcurrent = DefaultMaxConcurrent
	}
	if opts.MaxGoals <= 0 {
		opts.MaxGoals = DefaultMaxGoals
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	sctx, cancel := context.WithCancelCause(context.Background())
	if opts.Approvals == nil {
		opts.Approvals = agent.NewApprovals(repo, opts.AutoApprove)
	}
	s := &Service{repo: repo, models: models, registry: registry, events: events, approvals: opts.Approvals,
		opts: opts, log: opts.Logger, runs: map[string]*run{}, ctx: sctx, cancel: cancel}
	goals, err := repo.ListGoals(ctx)
	if err != nil {
		return nil, fmt.Errorf("load goals: %w", err)
	}
	slices.SortFunc(goals, func(a, b Goal) int { return a.CreatedAt.Compare(b.CreatedAt) })
	for _, g := range goals {
		switch g.Status {
		case StatusRunning, StatusAwaitingApproval:
			g.Status = StatusInterrupted
			if err := s.save(ctx, g, Event{Type: EventStatus, Data: mustJSON(map[string]any{"status": StatusInterrupted,
				"message": "the app stopped while this goal ran; resume it to continue"})}); err != nil {
				return nil, err
			}
		case StatusPending:
			s.queue = append(s.queue, g.ID)
		}
	}
	s.mu.Lock()
	s.schedule()
	s.mu.Unlock()
	return s, nil
}

// Events is the live stream of every goal's events.
func (s *Service) Events() *pubsub.Broker[Event] { return s.events }

// Registry is the tool registry goals run with.
func (s *Service) Registry() *tools.Registry { return s.registry }

func (s *Service) publishLive(e Event) { s.events.Publish(e.Type, e) }

func (s *Service) publishStored(e Event) {
	if e.Type == EventEnded {
		ctx, cancel := context.WithTimeout(context.Background(), endedPublishTimeout)
		defer cancel()
		s.events.PublishMust(ctx, e.Type, e) // Best effort past the timeout: it is in the store.
		return
	}
	s.events.Publish(e.Type, e)
}

// save writes a goal row (and events) outside a run, and publishes the events.
func (s *Service) save(ctx context.Context, g Goal, events ...Event) error {
	g.UpdatedAt = time.Now().UTC()
	c := &Commit{Goal: &g, Events: events}
	if err := s.repo.CommitGoal(ctx, c); err != nil {
		return err
	}
	for _, e := range c.Events {
		s.publishStored(e)
	}
	return nil
}

// Check validates a spec as Start would, starting nothing: a fleet checks every task's goal
// before it creates the fleet, so a mistake in task 5 is found before task 1 runs.
func (s *Service) Check(ctx context.Context, spec Spec) error {
	_, err := s.validate(ctx, spec)
	return err
}

func (s *Service) validate(ctx context.Context, spec Spec) (Spec, error) {
	spec.Goal = strings.TrimSpace(spec.Goal)
	if spec.Goal == "" {
		return spec, &FieldError{"goal", "must not be empty: say what should be achieved"}
	}
	if err := CheckText(spec.Goal, true); err != nil {
		return spec, &FieldError{"goal", err.Error()}
	}
	if spec.PaneID == "" {
		return spec, &FieldError{"paneId", "pick the pane the goal works in"}
	}
	if s.opts.PaneExists != nil && !s.opts.PaneExists(spec.PaneID) {
		return spec, &FieldError{"paneId", fmt.Sprintf("no pane %q; pick a pane of an open workspace", spec.PaneID)}
	}
	p, err := spec.Policy.Validate(s.registry)
	if err != nil {
		var fe *policy.FieldError
		if errors.As(err, &fe) {
			return spec, &FieldError{"policy." + fe.Field, fe.Msg}
		}
		return spec, err
	}
	spec.Policy = p
	// Checked before the defaults fill in: a negative limit is a mistake, not "the default".
	if spec.Settings.WallClock < 0 {
		return spec, &FieldError{"settings.wallClock", fmt.Sprintf("is %v; give a time above 0, or leave it out for %v", time.Duration(spec.Settings.WallClock), DefaultWallClock)}
	}
	if spec.Settings.MaxSteps < 0 {
		return spec, &FieldError{"settings.maxSteps", fmt.Sprintf("is %d; give a number of steps above 0, or leave it out for %d", spec.Settings.MaxSteps, DefaultMaxSteps)}
	}
	spec.Settings = spec.Settings.withDefaults()
	if spec.Settings.BudgetUSD == 0 {
		spec.Settings.BudgetUSD = s.opts.DefaultBudgetUSD
	}
	if spec.Settings.BudgetTokens == 0 {
		spec.Settings.BudgetTokens = s.opts.DefaultBudgetTokens
	}
	if spec.Settings.WorkDir == "" {
		spec.Settings.WorkDir = spec.Policy.SandboxDir
	}
	if spec.Settings.WorkDir == "" {
		// Shell criteria need somewhere to run: the user's home, as a new terminal would.
		spec.Settings.WorkDir, _ = os.UserHomeDir()
	}
	switch st := spec.Settings; {
	case st.CriticInterval != nil && *st.CriticInterval < 0:
		return spec, &FieldError{"settings.criticIntervalSteps", "must be 0 (off) or more"}
	case st.BudgetUSD < 0:
		return spec, &FieldError{"settings.budgetUsd", "must be 0 (no cap) or more"}
	case st.BudgetTokens < 0:
		return spec, &FieldError{"settings.budgetTokens", "must be 0 (no cap) or more"}
	case st.ContextWindow < 0 || (st.ContextWindow > 0 && st.ContextWindow < MinContextWindow):
		return spec, &FieldError{"settings.contextWindow", fmt.Sprintf("%d tokens cannot hold a goal: use 0 (the model's own) or at least %d", st.ContextWindow, MinContextWindow)}
	}
	if err := spec.Settings.Guard.Validate(); err != nil {
		return spec, &FieldError{"settings.guard", err.Error()}
	}
	spec.Persona = strings.TrimSpace(spec.Persona)
	if _, _, err := s.persona(spec); err != nil {
		return spec, err
	}
	if _, err := s.models.Model(ctx, spec.Settings.Provider); err != nil {
		return spec, &FieldError{"settings.provider", err.Error()}
	}
	if _, err := s.models.Model(ctx, s.criticRef(spec)); err != nil {
		return spec, &FieldError{"settings.criticProvider", err.Error()}
	}
	if _, err := s.parseCriterion(ctx, spec); err != nil {
		return spec, err
	}
	for _, dep := range spec.DependsOn {
		if _, err := s.repo.Goal(ctx, dep); err != nil {
			return spec, &FieldError{"dependsOn", fmt.Sprintf("no goal %q to wait for", dep)}
		}
	}
	if spec.Worktree != nil {
		if _, _, err := worktreeRepo(ctx, spec); err != nil {
			return spec, err
		}
	}
	return spec, nil
}

// persona looks up the spec's persona and skills, naming the field of an unknown id.
func (s *Service) persona(spec Spec) (catalog.Persona, []catalog.Skill, error) {
	if spec.Persona == "" && len(spec.Skills) == 0 {
		return catalog.Persona{}, nil, nil
	}
	if s.opts.Catalog == nil {
		return catalog.Persona{}, nil, &FieldError{"persona", "personas and skills are not available here"}
	}
	p, skills, err := s.opts.Catalog.Resolve(spec.Persona, spec.Skills)
	var le *catalog.LookupError
	if errors.As(err, &le) {
		return p, nil, &FieldError{le.Field, strings.TrimPrefix(err.Error(), le.Field+": ")}
	}
	return p, skills, err
}

func (s *Service) criticRef(spec Spec) string {
	if spec.Settings.CriticProvider != "" {
		return spec.Settings.CriticProvider
	}
	return "critic"
}

func (s *Service) parseCriterion(ctx context.Context, spec Spec) (criterion.Criterion, error) {
	deps := criterion.Deps{Visual: s.opts.Visual}
	if spec.Criterion.Kind == "model_question" {
		judge, err := s.models.Model(ctx, s.criticRef(spec))
		if err != nil {
			return nil, &FieldError{"criterion", "the judge model cannot be reached: " + err.Error()}
		}
		deps.Judge, deps.JudgeVision = judge.Provider, judge.Vision
	}
	c, err := criterion.Parse(spec.Criterion, deps)
	if err != nil {
		var fe *criterion.FieldError
		if errors.As(err, &fe) {
			return nil, &FieldError{fe.Field, fe.Msg}
		}
		return nil, err
	}
	return c, nil
}

func (s *Service) running(id string) (*run, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.runs[id]
	if !ok {
		if _, err := s.repo.Goal(s.ctx, id); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("goal %s is not running", id)
	}
	return r, nil
}

// Pause holds a running goal; the model stream or tool call in flight is stopped.
func (s *Service) Pause(ctx context.Context, id string) error {
	r, err := s.running(id)
	if err != nil {
		return err
	}
	r.pause()
	return nil
}

// Abort ends a goal: a running one within a second (its stream or tool call is cancelled),
// a pending or paused one at once.
func (s *Service) Abort(ctx context.Context, id string) error {
	s.mu.Lock()
	r, ok := s.runs[id]
	s.mu.Unlock()
	if ok {
		r.cancel(agent.Stopped)
		// The run's final words may take a while (its model turn is cut, its tool gets its
		// grace): the caller decides how long to wait; the goal ends either way.
		select {
		case <-r.done:
		case <-ctx.Done():
			return fmt.Errorf("goal %s is stopping; it did not end within the time asked (%w)", id, ctx.Err())
		}
		return nil
	}
	g, err := s.repo.Goal(ctx, id)
	if err != nil {
		return err
	}
	if g.Status.Finished() {
		return fmt.Errorf("goal %s has already ended (%s)", id, g.Status)
	}
	s.mu.Lock()
	s.queue = slices.DeleteFunc(s.queue, func(q string) bool { return q == id })
	s.mu.Unlock()
	now := time.Now().UTC()
	g.Status, g.EndedAt = StatusAborted, &now
	g.Report = endWorktree(&g, "Aborted by the user.")
	return s.save(ctx, g, Event{Type: EventEnded, Data: mustJSON(map[string]any{"status": g.Status, "report": g.Report})})
}

// Steer sends the model a message it gets on its next turn.
func (s *Service) Steer(ctx context.Context, id, text string) error {
	text = strings.TrimSpace(text)
	if text == "" {
		return &FieldError{"text", "write the message to send"}
	}
	return s.steer(ctx, id, steerPrefix+text, map[string]string{"text": text})
}

// ShareContext gives a running goal context from another agent (share_context): it reads it
// on its next turn, marked as coming from that agent rather than from the user.
func (s *Service) ShareContext(ctx context.Context, id, from, text string) error {
	text = strings.TrimSpace(text)
	if text == "" {
		return &FieldError{"context", "write the context to share"}
	}
	return s.steer(ctx, id, fmt.Sprintf("[Context shared by %s]: %s", from, text), map[string]string{"text": text, "from": from})
}

// steer gives running goal id msg on its next turn, and records and publishes the steered
// event with data.
func (s *Service) steer(ctx context.Context, id, msg string, data map[string]string) error {
	r, err := s.running(id)
	if err != nil {
		return err
	}
	r.steer(msg)
	c := &Commit{ID: id, Events: []Event{{Type: EventSteered, Data: mustJSON(data)}}}
	if err := s.repo.CommitGoal(ctx, c); err != nil {
		return err
	}
	s.publishStored(c.Events[0]) // numbered by the store, so every window places it alike
	return nil
}

// RaiseBudget sets a new budget (0 keeps that part) and lets a goal held for budget go on.
func (s *Service) RaiseBudget(ctx context.Context, id string, usd float64, tokens int) error {
	if usd < 0 || tokens < 0 {
		return &FieldError{"budget", "must be 0 (keep) or more"}
	}
	r, err := s.running(id)
	if err != nil {
		return err
	}
	r.raiseBudget(usd, tokens)
	return nil
}

// unsaved keeps the end of a goal the store would not take.
func (s *Service) unsaved(g Goal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lost == nil {
		s.lost = map[string]Goal{}
	}
	s.lost[g.ID] = g
}

// Wait blocks until the goal ends (or ctx ends) and returns it.
func (s *Service) Wait(ctx context.Context, id string) (Goal, error) {
	for {
		s.mu.Lock()
		r, ok := s.runs[id]
		queued := slices.Contains(s.queue, id)
		lost, isLost := s.lost[id]
		s.mu.Unlock()
		if isLost && !ok {
			return lost, nil
		}
		if ok {
			select {
			case <-r.done:
			case <-ctx.Done():
				return Goal{}, ctx.Err()
			}
			continue
		}
		g, err := s.repo.Goal(ctx, id)
		if err != nil || (!queued && g.Status != StatusPending) {
			return g, err
		}
		select {
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
			return Goal{}, ctx.Err()
		}
	}
}

// Shutdown stops every run (they become interrupted, resumable after a restart) and waits.
func (s *Service) Shutdown() {
	s.cancel(agent.Shutdown)
	s.wg.Wait()
}

// WorkingIn returns the goal that runs in the pane now (running, paused or waiting on an
// approval), if any: such a pane must not be converted or removed under it.
func (s *Service) WorkingIn(paneID string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, r := range s.runs {
		if r.paneID == paneID {
			return id, true
		}
	}
	return "", false
}

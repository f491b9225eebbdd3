package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/pubsub"
	"github.com/clusterspace/clusterspace/backend/worktree"
)

// Event types, published live (the store keeps the state they describe).
const (
	EventTask  = "task"  // a task changed status
	EventFleet = "fleet" // the fleet changed status
	EventAgent = "agent" // a pane's agent changed: its role, purpose or inbox (no fleet id)
)

// Event is one change of a fleet or a task.
type Event struct {
	FleetID string    `json:"fleetId"`
	TaskID  string    `json:"taskId,omitempty"`
	Type    string    `json:"type"`
	Status  string    `json:"status"`
	GoalID  string    `json:"goalId,omitempty"`
	Pane    string    `json:"pane,omitempty"`
	Reason  string    `json:"reason,omitempty"`
	Report  string    `json:"report,omitempty"`
	At      time.Time `json:"at"`
}

// Options tune the service.
type Options struct {
	Logger *slog.Logger
	// EnsurePanes makes the panes of a fleet's tasks that do not exist yet (nil: they must).
	EnsurePanes func(ctx context.Context, f Fleet, paneIDs []string) error
	// PaneExists says whether a pane exists (set_agent_role checks it); nil: any id goes.
	PaneExists func(paneID string) bool
}

// Service creates fleets and drives them: it hands each task to the Goal Runner as a goal
// of the fleet's group, which starts it in its turn (see schedule.go), and follows the goals
// to their end.
type Service struct {
	repo   Repo
	goals  *goal.Service
	events *pubsub.Broker[Event]
	opts   Options
	log    *slog.Logger

	mu     sync.Mutex
	active map[string]*live
	// preparing cancels the worktree preparation (git, setup) of a task, by fleet/task id.
	preparing map[string]context.CancelFunc
	// failedBy holds, by goal id, why fail_task ended a task's goal: the task ends failed with
	// that reason rather than aborted.
	failedBy map[string]string
	stats    schedStats
	// ports hands each isolated task its range of ports (runenv.go).
	ports worktree.Ports
	// recorded is closed (and replaced) whenever a task's end is recorded (awaitRecorded).
	recorded chan struct{}

	// saved is each fleet's tasks as last stored, so a save writes only what changed.
	savedMu sync.Mutex
	saved   map[string]map[string]Task

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// live is a fleet this process drives.
type live struct {
	f        Fleet
	done     chan struct{}
	aborting bool
}

// NewService returns the service. Fleets the last process left running are marked
// interrupted: `Resume` goes on with them, keeping every verified task.
func NewService(ctx context.Context, repo Repo, goals *goal.Service, events *pubsub.Broker[Event], opts Options) (*Service, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	sctx, cancel := context.WithCancel(context.Background())
	s := &Service{repo: repo, goals: goals, events: events, opts: opts, log: opts.Logger,
		active: map[string]*live{}, preparing: map[string]context.CancelFunc{}, failedBy: map[string]string{}, saved: map[string]map[string]Task{}, recorded: make(chan struct{}), ctx: sctx, cancel: cancel}
	fs, err := repo.ListFleets(ctx)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("load fleets: %w", err)
	}
	for _, f := range fs {
		if f.Status == StatusRunning {
			f.Status = StatusInterrupted
			if err := s.save(ctx, &f); err != nil {
				cancel()
				return nil, err
			}
		}
	}
	return s, nil
}

// Events is the live stream of fleet and task changes.
func (s *Service) Events() *pubsub.Broker[Event] { return s.events }

// save stores the fleet row and the tasks that changed since the last save: a fleet of 100
// tasks rewrites one or two rows per event, not 100, which keeps the scheduler's time per
// task flat as fleets grow.
func (s *Service) save(ctx context.Context, f *Fleet) error {
	f.UpdatedAt = time.Now().UTC()
	s.savedMu.Lock()
	defer s.savedMu.Unlock()
	prev := s.saved[f.ID]
	out := *f
	out.Tasks = nil
	for _, t := range f.Tasks {
		if p, ok := prev[t.ID]; !ok || !reflect.DeepEqual(p, t) {
			out.Tasks = append(out.Tasks, t)
		}
	}
	if err := s.repo.SaveFleet(ctx, out); err != nil {
		return err
	}
	if prev == nil {
		prev = map[string]Task{}
		s.saved[f.ID] = prev
	}
	for _, t := range cloneTasks(out.Tasks) {
		prev[t.ID] = t
	}
	return nil
}

func (s *Service) publishTask(f *Fleet, t *Task) {
	s.events.Publish(EventTask, Event{FleetID: f.ID, TaskID: t.ID, Type: EventTask, Status: string(t.Status), GoalID: t.GoalID,
		Pane: t.Pane, Reason: t.Reason, Report: t.Report, At: time.Now().UTC()})
}

func (s *Service) publishFleet(f *Fleet) {
	s.events.Publish(EventFleet, Event{FleetID: f.ID, Type: EventFleet, Status: string(f.Status), At: time.Now().UTC()})
}

// Create stores a fleet from a parsed file and starts it. spec is the template every task's
// goal starts from (policy, sandbox, settings); spec.Concurrency 0 takes the file's. Each
// task's goal is checked first as the Goal Runner would check it: a mistake is a
// *FieldError naming the task, and nothing starts.
func (s *Service) Create(ctx context.Context, file File, spec Spec) (Fleet, error) {
	if spec.Concurrency <= 0 {
		spec.Concurrency = file.Concurrency
	}
	if spec.Concurrency <= 0 {
		spec.Concurrency = DefaultConcurrency
	}
	if spec.Concurrency > MaxConcurrency {
		return Fleet{}, &FieldError{Field: "concurrency", Msg: fmt.Sprintf("at most %d", MaxConcurrency)}
	}
	if strings.TrimSpace(file.Name) == "" {
		return Fleet{}, &FieldError{Field: "name", Msg: "must not be empty: name the fleet"}
	}
	if len(file.Tasks) == 0 {
		return Fleet{}, &FieldError{Field: "tasks", Msg: "give at least one task"}
	}
	if err := Validate(file.Tasks); err != nil {
		return Fleet{}, err
	}
	now := time.Now().UTC()
	spec.Isolation, spec.Setup = file.Isolation, file.Setup
	copies, err := checkCopy(file.Copy)
	if err != nil {
		return Fleet{}, err
	}
	spec.Copy = copies
	if file.Land != nil {
		spec.LandCheck, spec.LandStrategy = file.Land.Check, file.Land.Strategy
	}
	if spec.Isolation == "none" {
		spec.Isolation = ""
	}
	f := Fleet{ID: agent.NewID("fleet-"), Name: file.Name, Status: StatusRunning, Spec: spec, CreatedAt: now, UpdatedAt: now}
	for i, ts := range file.Tasks {
		f.Tasks = append(f.Tasks, Task{TaskSpec: ts, Seq: i + 1, Status: TaskWaiting, CreatedAt: now})
	}
	for i := range f.Tasks {
		t := &f.Tasks[i]
		if !isolated(&f, t) {
			continue
		}
		_, head, err := worktree.RepoHead(ctx, repoDirOf(s.goalSpec(&f, t, "")))
		if err != nil {
			field := "isolation"
			if t.Isolation == "" {
				return Fleet{}, &FieldError{Field: field, Msg: strings.TrimPrefix(err.Error(), "isolation: ")}
			}
			return Fleet{}, &FieldError{Task: fmt.Sprintf("%q", t.ID), Field: field, Msg: strings.TrimPrefix(err.Error(), "isolation: ")}
		}
		if f.Spec.Base == "" {
			f.Spec.Base = head
			f.Spec.Target = worktree.Branch(ctx, repoDirOf(s.goalSpec(&f, t, "")))
		}
	}
	if err := s.ensurePanes(ctx, f, f.Tasks); err != nil {
		return Fleet{}, err
	}
	for _, t := range f.Tasks {
		if err := s.goals.Check(ctx, s.goalSpec(&f, &t, "")); err != nil {
			return Fleet{}, taskError(t.ID, err)
		}
	}
	if err := s.save(ctx, &f); err != nil {
		return Fleet{}, err
	}
	s.mu.Lock()
	began := time.Now()
	l := &live{f: f, done: make(chan struct{})}
	s.drive(l)
	s.publishFleet(&l.f)
	s.schedule(l)
	s.stats.add(began)
	s.mu.Unlock()
	return s.settled(ctx, l), nil
}

// settled waits until the first goals the Goal Runner picked of the fleet run, and returns
// the fleet as it is then: whoever created it (or get_fleet_status right after) sees which
// tasks run and which queue.
func (s *Service) settled(ctx context.Context, l *live) Fleet {
	if err := s.goals.Settle(ctx, l.f.ID); err != nil {
		s.log.Warn("fleet: wait for the first tasks to start", "fleet", l.f.ID, "err", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	f := l.f
	f.Tasks = cloneTasks(l.f.Tasks)
	return f
}

// taskError names the task in a goal's validation error.
func taskError(taskID string, err error) error {
	var fe *goal.FieldError
	if errors.As(err, &fe) {
		return &FieldError{Task: fmt.Sprintf("%q", taskID), Field: fe.Field, Msg: fe.Msg}
	}
	return &FieldError{Task: fmt.Sprintf("%q", taskID), Field: "goal", Msg: err.Error()}
}

func (s *Service) ensurePanes(ctx context.Context, f Fleet, tasks []Task) error {
	if s.opts.EnsurePanes == nil {
		return nil
	}
	var ids []string
	for _, t := range tasks {
		if !slices.Contains(ids, t.Pane) {
			ids = append(ids, t.Pane)
		}
	}
	if err := s.opts.EnsurePanes(ctx, f, ids); err != nil {
		return fmt.Errorf("making the fleet's panes: %w", err)
	}
	return nil
}

// goalSpec is the goal a task runs as.
func (s *Service) goalSpec(f *Fleet, t *Task, handoff string) goal.Spec {
	spec := goal.Spec{PaneID: t.Pane, Goal: t.Goal, Criterion: t.Criterion, Policy: f.Spec.Policy, Settings: f.Spec.Settings, Handoff: handoff,
		Persona: t.Persona}
	if t.Policy != nil {
		spec.Policy = *t.Policy
	}
	if t.Settings != nil {
		spec.Settings = *t.Settings
	}
	if wt := t.Worktree; wt != nil && wt.WorkDir != "" {
		// The task works in its worktree: its shell, its paths and its criterion all mean it.
		if spec.Policy.SandboxDir != "" {
			spec.Policy.SandboxDir = wt.WorkDir
		}
		spec.Settings.WorkDir = wt.WorkDir
		withWorktreeEnv(&spec, wt)
	}
	return spec
}

func dirExists(dir string) bool {
	st, err := os.Stat(dir)
	return err == nil && st.IsDir()
}

// report is a task's final report: the claim's rationale and the verification's detail for
// a completed goal, the goal's report otherwise.
func (s *Service) report(g goal.Goal) string {
	if g.Status != goal.StatusCompleted {
		return g.Report
	}
	detail := ""
	if evs, err := s.goals.History(context.Background(), g.ID, 0); err == nil {
		for _, e := range evs {
			if e.Type == goal.EventVerificationPassed {
				var d struct{ Detail string }
				json.Unmarshal(e.Data, &d)
				detail = d.Detail
			}
		}
	}
	return fmt.Sprintf("Claim: %s\nVerification: %s", strings.TrimSpace(g.Report), orNone(detail))
}

func orNone(s string) string {
	if strings.TrimSpace(s) == "" {
		return "(none recorded)"
	}
	return strings.TrimSpace(s)
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "…"
	}
	return s
}

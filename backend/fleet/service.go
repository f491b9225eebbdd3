package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/pubsub"
)

// Event types, published live (the store keeps the state they describe).
const (
	EventTask  = "task"  // a task changed status
	EventFleet = "fleet" // the fleet changed status
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
}

// Service creates fleets and drives them: it starts each task as a goal once its
// dependencies verified complete, within the fleet's concurrency cap, and follows the goals
// to their end.
type Service struct {
	repo   Repo
	goals  *goal.Service
	events *pubsub.Broker[Event]
	opts   Options
	log    *slog.Logger

	mu     sync.Mutex
	active map[string]*live
	// inbox holds context shared with a pane no goal works in yet: the next task started
	// there gets it in its first prompt.
	inbox map[string][]string

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
		active: map[string]*live{}, inbox: map[string][]string{}, ctx: sctx, cancel: cancel}
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

func (s *Service) save(ctx context.Context, f *Fleet) error {
	f.UpdatedAt = time.Now().UTC()
	return s.repo.SaveFleet(ctx, *f)
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
	f := Fleet{ID: agent.NewID("fleet-"), Name: file.Name, Status: StatusRunning, Spec: spec, CreatedAt: now, UpdatedAt: now}
	for i, ts := range file.Tasks {
		f.Tasks = append(f.Tasks, Task{TaskSpec: ts, Seq: i + 1, Status: TaskWaiting, CreatedAt: now})
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
	defer s.mu.Unlock()
	l := &live{f: f, done: make(chan struct{})}
	s.active[f.ID] = l
	s.publishFleet(&l.f)
	s.schedule(l)
	return l.f, nil
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
	return spec
}

// schedule blocks the dependants of failed tasks, starts ready tasks while the fleet has
// room (highest priority first, then oldest), and ends the fleet when nothing is left to
// run. Called with s.mu held.
func (s *Service) schedule(l *live) {
	if s.ctx.Err() != nil || l.aborting || l.f.Status != StatusRunning {
		return
	}
	f := &l.f
	s.propagateBlocks(f)
	running := 0
	busy := map[string]bool{}
	for _, t := range f.Tasks {
		if t.Status == TaskRunning {
			running++
			busy[t.Pane] = true
		}
	}
	for _, q := range s.queue(f) {
		if running >= f.Spec.Concurrency {
			break
		}
		t, _ := f.Task(q)
		if busy[t.Pane] || s.paneBusy(t.Pane) {
			continue // one goal per pane: the task waits for the pane
		}
		s.start(f, t)
		if t.Status == TaskRunning {
			running++
			busy[t.Pane] = true
		}
	}
	s.propagateBlocks(f) // a task that could not start blocks its dependants too
	ended := true
	for _, t := range f.Tasks {
		if !t.Status.Ended() {
			ended = false
		}
	}
	if ended {
		f.Status = StatusCompleted
		for _, t := range f.Tasks {
			if t.Status != TaskCompleted {
				f.Status = StatusFailed
			}
		}
	}
	if err := s.save(s.ctx, f); err != nil {
		s.log.Error("fleet: save", "fleet", f.ID, "err", err)
	}
	if ended {
		s.publishFleet(f)
		delete(s.active, f.ID)
		close(l.done)
	}
}

// paneBusy reports whether a goal outside this fleet's bookkeeping works in the pane (one
// started from the dashboard, say, or another fleet's).
func (s *Service) paneBusy(pane string) bool {
	if _, ok := s.goals.WorkingIn(pane); ok {
		return true
	}
	for _, l := range s.active {
		for _, t := range l.f.Tasks {
			if t.Status == TaskRunning && t.Pane == pane {
				return true
			}
		}
	}
	return false
}

// queue is the fleet's waiting tasks whose dependencies all verified complete, in the order
// they start: priority (highest first), then age.
func (s *Service) queue(f *Fleet) []string {
	var ready []*Task
	for i := range f.Tasks {
		t := &f.Tasks[i]
		if t.Status == TaskWaiting && s.depsDone(f, t) {
			ready = append(ready, t)
		}
	}
	slices.SortStableFunc(ready, func(a, b *Task) int {
		if a.Priority != b.Priority {
			return b.Priority - a.Priority
		}
		return a.Seq - b.Seq
	})
	ids := make([]string, len(ready))
	for i, t := range ready {
		ids[i] = t.ID
	}
	return ids
}

func (s *Service) depsDone(f *Fleet, t *Task) bool {
	for _, d := range t.DependsOn {
		if dt, ok := f.Task(d); !ok || dt.Status != TaskCompleted {
			return false
		}
	}
	return true
}

// propagateBlocks marks blocked every waiting task with a dependency that failed, was
// aborted or is blocked itself, naming it: transitively, until nothing changes.
func (s *Service) propagateBlocks(f *Fleet) {
	for changed := true; changed; {
		changed = false
		for i := range f.Tasks {
			t := &f.Tasks[i]
			if t.Status != TaskWaiting {
				continue
			}
			for _, d := range t.DependsOn {
				dt, ok := f.Task(d)
				if !ok {
					continue
				}
				switch dt.Status {
				case TaskFailed, TaskAborted:
					t.Reason = fmt.Sprintf("task %s, which it depends on, %s: %s", dt.ID, dt.Status, firstLine(dt.Report))
				case TaskBlocked:
					t.Reason = fmt.Sprintf("task %s, which it depends on, is blocked (%s)", dt.ID, dt.Reason)
				default:
					continue
				}
				now := time.Now().UTC()
				t.Status, t.EndedAt, changed = TaskBlocked, &now, true
				s.publishTask(f, t)
				break
			}
		}
	}
}

// start starts a task's goal, with its dependencies' reports and any context shared with
// its pane in the first prompt. Called with s.mu held.
func (s *Service) start(f *Fleet, t *Task) {
	var b strings.Builder
	for _, d := range t.DependsOn {
		dt, _ := f.Task(d)
		fmt.Fprintf(&b, "Task %s (%q) verified complete. Its report:\n%s\n\n", dt.ID, dt.Goal, dt.Report)
	}
	for _, c := range s.inbox[t.Pane] {
		fmt.Fprintf(&b, "%s\n\n", c)
	}
	delete(s.inbox, t.Pane)
	now := time.Now().UTC()
	g, err := s.goals.Start(s.ctx, s.goalSpec(f, t, strings.TrimSpace(b.String())))
	if err != nil {
		t.Status, t.Report, t.EndedAt = TaskFailed, "Could not start: "+err.Error(), &now
		s.publishTask(f, t)
		return
	}
	t.Status, t.GoalID, t.StartedAt = TaskRunning, g.ID, &now
	s.publishTask(f, t)
	s.watch(f.ID, t.ID, g.ID)
}

// watch follows a task's goal to its end.
func (s *Service) watch(fleetID, taskID, goalID string) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		g, err := s.goals.Wait(s.ctx, goalID)
		if s.ctx.Err() != nil {
			return
		}
		if err != nil {
			g = goal.Goal{ID: goalID, Status: goal.StatusFailed, Report: "its goal is gone: " + err.Error()}
		}
		if !g.Status.Finished() {
			return // interrupted: the app is stopping; resume picks it up
		}
		s.taskEnded(fleetID, taskID, g)
	}()
}

// taskEnded records a task's goal's end and schedules what it unblocks.
func (s *Service) taskEnded(fleetID, taskID string, g goal.Goal) {
	report := s.report(g)
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.active[fleetID]
	if !ok {
		return
	}
	t, ok := l.f.Task(taskID)
	if !ok || t.Status != TaskRunning || t.GoalID != g.ID {
		return
	}
	now := time.Now().UTC()
	t.Report, t.EndedAt = report, &now
	switch g.Status {
	case goal.StatusCompleted:
		t.Status = TaskCompleted
	case goal.StatusAborted:
		t.Status = TaskAborted
	default:
		t.Status = TaskFailed
	}
	s.publishTask(&l.f, t)
	s.schedule(l)
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

// Resume goes on with an interrupted fleet: verified tasks stay done, tasks whose goal was
// cut off resume that goal with its conversation, the rest wait their turn as before.
func (s *Service) Resume(ctx context.Context, id string) (Fleet, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l, ok := s.active[id]; ok {
		return l.f, nil
	}
	f, err := s.repo.Fleet(ctx, id)
	if err != nil {
		return Fleet{}, err
	}
	if f.Status != StatusInterrupted && f.Status != StatusRunning {
		return Fleet{}, fmt.Errorf("fleet %s has ended (%s); only an interrupted fleet resumes", id, f.Status)
	}
	if err := s.ensurePanes(ctx, f, f.Tasks); err != nil {
		return Fleet{}, err
	}
	f.Status = StatusRunning
	l := &live{f: f, done: make(chan struct{})}
	s.active[id] = l
	for i := range l.f.Tasks {
		t := &l.f.Tasks[i]
		if t.Status != TaskRunning {
			continue
		}
		g, err := s.goals.Get(ctx, t.GoalID)
		now := time.Now().UTC()
		switch {
		case err != nil:
			t.Status, t.Report, t.EndedAt = TaskFailed, "its goal is gone: "+err.Error(), &now
		case g.Status.Finished():
			// It ended after the last save: record it as the watcher would have.
			t.Report, t.EndedAt = s.report(g), &now
			t.Status = map[goal.Status]TaskStatus{goal.StatusCompleted: TaskCompleted, goal.StatusAborted: TaskAborted}[g.Status]
			if t.Status == "" {
				t.Status = TaskFailed
			}
		case g.Status == goal.StatusPending:
			s.watch(id, t.ID, g.ID) // the Goal Runner queued it again at start
			continue
		default:
			if err := s.goals.Resume(ctx, g.ID); err != nil {
				t.Status, t.Report, t.EndedAt = TaskFailed, "its goal could not resume: "+err.Error(), &now
			} else {
				s.watch(id, t.ID, g.ID)
				continue
			}
		}
		s.publishTask(&l.f, t)
	}
	s.publishFleet(&l.f)
	s.schedule(l)
	return l.f, nil
}

// Abort ends a fleet: its running goals are aborted, its waiting tasks will not start.
func (s *Service) Abort(ctx context.Context, id string) error {
	s.mu.Lock()
	l, ok := s.active[id]
	var f Fleet
	if ok {
		l.aborting = true
		f = l.f
	}
	s.mu.Unlock()
	if !ok {
		stored, err := s.repo.Fleet(ctx, id)
		if err != nil {
			return err
		}
		if stored.Status.Finished() {
			return fmt.Errorf("fleet %s has already ended (%s)", id, stored.Status)
		}
		f = stored
	}
	for _, t := range f.Tasks {
		if t.Status == TaskRunning && t.GoalID != "" {
			if g, err := s.goals.Get(ctx, t.GoalID); err == nil && !g.Status.Finished() {
				if err := s.goals.Abort(ctx, t.GoalID); err != nil {
					s.log.Warn("fleet: abort a task's goal", "fleet", id, "goal", t.GoalID, "err", err)
				}
			}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if l != nil {
		f = l.f
	}
	now := time.Now().UTC()
	for i := range f.Tasks {
		t := &f.Tasks[i]
		if t.Status == TaskWaiting || t.Status == TaskRunning {
			t.Status, t.EndedAt = TaskAborted, &now
			if t.Report == "" {
				t.Report = "The fleet was aborted."
			}
			s.publishTask(&f, t)
		}
	}
	f.Status = StatusAborted
	if err := s.save(ctx, &f); err != nil {
		return err
	}
	s.publishFleet(&f)
	if l != nil {
		l.f = f
		delete(s.active, id)
		close(l.done)
	}
	return nil
}

// Wait blocks until the fleet ends (or is no longer driven by this process) and returns it.
func (s *Service) Wait(ctx context.Context, id string) (Fleet, error) {
	s.mu.Lock()
	l, ok := s.active[id]
	s.mu.Unlock()
	if ok {
		select {
		case <-l.done:
		case <-ctx.Done():
			return Fleet{}, ctx.Err()
		}
	}
	return s.repo.Fleet(ctx, id)
}

// Get returns a fleet as it is now.
func (s *Service) Get(ctx context.Context, id string) (Fleet, error) {
	s.mu.Lock()
	if l, ok := s.active[id]; ok {
		f := l.f
		f.Tasks = slices.Clone(f.Tasks)
		s.mu.Unlock()
		return f, nil
	}
	s.mu.Unlock()
	return s.repo.Fleet(ctx, id)
}

// List returns every fleet, newest first.
func (s *Service) List(ctx context.Context) ([]Fleet, error) {
	fs, err := s.repo.ListFleets(ctx)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range fs {
		if l, ok := s.active[fs[i].ID]; ok {
			fs[i] = l.f
			fs[i].Tasks = slices.Clone(l.f.Tasks)
		}
	}
	return fs, nil
}

// Shutdown stops following the goals (the Goal Runner interrupts them); the running fleets
// are stored as interrupted, for Resume after a restart.
func (s *Service) Shutdown() {
	s.cancel()
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, l := range s.active {
		l.f.Status = StatusInterrupted
		if err := s.save(context.Background(), &l.f); err != nil {
			s.log.Error("fleet: save at shutdown", "fleet", id, "err", err)
		}
		delete(s.active, id)
		close(l.done)
	}
}

// Retry runs a failed, aborted or blocked task again: it and the tasks blocked behind it
// wait again (their reasons cleared), and a fleet that had ended runs again.
func (s *Service) Retry(ctx context.Context, fleetID, taskID string) (Fleet, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.active[fleetID]
	if !ok {
		f, err := s.repo.Fleet(ctx, fleetID)
		if err != nil {
			return Fleet{}, err
		}
		if f.Status == StatusInterrupted {
			return Fleet{}, fmt.Errorf("fleet %s is interrupted: resume it first", fleetID)
		}
		l = &live{f: f, done: make(chan struct{})}
	}
	t, ok := l.f.Task(taskID)
	if !ok {
		return Fleet{}, fmt.Errorf("fleet %s has no task %q", fleetID, taskID)
	}
	if t.Status != TaskFailed && t.Status != TaskAborted && t.Status != TaskBlocked {
		return Fleet{}, fmt.Errorf("task %s is %s; only a failed, aborted or blocked task is retried", taskID, t.Status)
	}
	reset := map[string]bool{taskID: true}
	for changed := true; changed; { // and what is blocked behind it
		changed = false
		for _, d := range l.f.Tasks {
			if d.Status == TaskBlocked && !reset[d.ID] && slices.ContainsFunc(d.DependsOn, func(id string) bool { return reset[id] }) {
				reset[d.ID], changed = true, true
			}
		}
	}
	for _, rt := range l.f.Tasks {
		for _, d := range rt.DependsOn {
			if dt, _ := l.f.Task(d); reset[rt.ID] && !reset[d] && dt.Status != TaskCompleted && dt.Status.Ended() {
				return Fleet{}, fmt.Errorf("task %s depends on task %s, which %s: retry %s", rt.ID, d, dt.Status, d)
			}
		}
	}
	for i := range l.f.Tasks {
		t := &l.f.Tasks[i]
		if reset[t.ID] {
			t.Status, t.Reason, t.Report, t.GoalID, t.StartedAt, t.EndedAt = TaskWaiting, "", "", "", nil, nil
			s.publishTask(&l.f, t)
		}
	}
	l.aborting = false
	l.f.Status = StatusRunning
	if _, ok := s.active[fleetID]; !ok {
		s.active[fleetID] = l
	}
	s.publishFleet(&l.f)
	s.schedule(l)
	return l.f, nil
}

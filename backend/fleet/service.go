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
	// preparing cancels the worktree preparation (git, setup) of a task, by fleet/task id.
	preparing map[string]context.CancelFunc
	// failedBy holds, by goal id, why fail_task ended a task's goal: the task ends failed with
	// that reason rather than aborted.
	failedBy map[string]string
	stats    schedStats

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
		active: map[string]*live{}, preparing: map[string]context.CancelFunc{}, failedBy: map[string]string{}, saved: map[string]map[string]Task{}, ctx: sctx, cancel: cancel}
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
		_, head, err := repoHead(ctx, repoDirOf(s.goalSpec(&f, t, "")))
		if err != nil {
			field := "isolation"
			if t.Isolation == "" {
				return Fleet{}, &FieldError{Field: field, Msg: strings.TrimPrefix(err.Error(), "isolation: ")}
			}
			return Fleet{}, &FieldError{Task: fmt.Sprintf("%q", t.ID), Field: field, Msg: strings.TrimPrefix(err.Error(), "isolation: ")}
		}
		if f.Spec.Base == "" {
			f.Spec.Base = head
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
	defer s.mu.Unlock()
	defer s.stats.add(time.Now())
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
	if wt := t.Worktree; wt != nil && wt.WorkDir != "" {
		// The task works in its worktree: its shell, its paths and its criterion all mean it.
		if spec.Policy.SandboxDir != "" {
			spec.Policy.SandboxDir = wt.WorkDir
		}
		spec.Settings.WorkDir = wt.WorkDir
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
		s.start(l, t)
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

// start starts a task: an isolated task first gets its worktree (in the background, holding
// its slot), then its goal. Called with s.mu held.
func (s *Service) start(l *live, t *Task) {
	f := &l.f
	wt := t.Worktree
	ready := wt != nil && !wt.Pruned && dirExists(wt.Dir) && (wt.SetupDone || f.Spec.Setup == "")
	if !isolated(f, t) || ready {
		s.startGoal(f, t)
		return
	}
	now := time.Now().UTC()
	t.Status, t.StartedAt = TaskRunning, &now
	s.publishTask(f, t)
	key := f.ID + "/" + t.ID
	ctx, cancel := context.WithCancel(s.ctx)
	s.preparing[key] = cancel
	snap, task, spec := *f, *t, s.goalSpec(f, t, "")
	snap.Tasks = cloneTasks(f.Tasks)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer cancel()
		wt, err := prepareWorktree(ctx, &snap, &task, spec)
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.preparing, key)
		if s.ctx.Err() != nil {
			return // stopping: resume prepares it again
		}
		cur, ok := s.active[snap.ID]
		t, found := l.f.Task(task.ID)
		if found && wt != nil {
			t.Worktree = wt // even if aborted meanwhile: prune must find it
		}
		if !ok || cur != l || !found || t.Status != TaskRunning || t.GoalID != "" {
			if found && wt != nil && !ok {
				s.save(s.ctx, &l.f) // Best effort: the fleet ended meanwhile; keep the worktree on record.
			}
			return // aborted or retried meanwhile
		}
		if err != nil {
			end := time.Now().UTC()
			t.Status, t.Report, t.EndedAt = TaskFailed, "Its worktree could not be prepared: "+err.Error(), &end
			s.publishTask(&l.f, t)
		} else {
			s.startGoal(&l.f, t)
		}
		s.schedule(l)
	}()
}

func dirExists(dir string) bool {
	st, err := os.Stat(dir)
	return err == nil && st.IsDir()
}

// startGoal starts a task's goal, with its role, its dependencies' reports and the context
// shared with its pane in the first prompt. Called with s.mu held.
func (s *Service) startGoal(f *Fleet, t *Task) {
	var b strings.Builder
	b.WriteString(s.startBriefing(s.ctx, t))
	for _, d := range t.DependsOn {
		dt, _ := f.Task(d)
		fmt.Fprintf(&b, "Task %s (%q) verified complete. Its report:\n%s\n\n", dt.ID, dt.Goal, dt.Report)
	}
	if wt := t.Worktree; wt != nil {
		fmt.Fprintf(&b, "You work in your own git worktree, %s, on branch %s: other tasks of the fleet work in their own, so edit freely here. The fleet commits what you leave there when your task ends.\n\n", wt.WorkDir, wt.Branch)
	}
	now := time.Now().UTC()
	began := time.Now()
	g, err := s.goals.Start(s.ctx, s.goalSpec(f, t, strings.TrimSpace(b.String())))
	s.stats.goalStart.Add(int64(time.Since(began)))
	if err != nil {
		t.Status, t.Report, t.EndedAt = TaskFailed, "Could not start: "+err.Error(), &now
		s.publishTask(f, t)
		return
	}
	if t.StartedAt == nil || t.Status != TaskRunning {
		t.StartedAt = &now
	}
	t.Status, t.GoalID = TaskRunning, g.ID
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
		s.taskEnded(fleetID, taskID, g, s.finishTask(fleetID, taskID, g))
	}()
}

// finishTask commits an isolated task's work on its branch once its goal ended, outside
// s.mu (git takes a while), and returns its worktree as it is now (nil without one).
func (s *Service) finishTask(fleetID, taskID string, g goal.Goal) *Worktree {
	s.mu.Lock()
	var snap Fleet
	var task Task
	if l, ok := s.active[fleetID]; ok {
		if t, ok := l.f.Task(taskID); ok && t.Worktree != nil {
			snap, task = l.f, *t
			w := *t.Worktree
			task.Worktree = &w
		}
	}
	s.mu.Unlock()
	if task.Worktree == nil {
		return nil
	}
	task.Status = taskStatusOf(g)
	finishWorktree(s.ctx, &snap, &task, task.Worktree)
	return task.Worktree
}

func taskStatusOf(g goal.Goal) TaskStatus {
	switch g.Status {
	case goal.StatusCompleted:
		return TaskCompleted
	case goal.StatusAborted:
		return TaskAborted
	}
	return TaskFailed
}

// taskEnded records a task's goal's end and schedules what it unblocks.
func (s *Service) taskEnded(fleetID, taskID string, g goal.Goal, wt *Worktree) {
	report := s.report(g)
	s.mu.Lock()
	defer s.mu.Unlock()
	began := time.Now()
	defer s.stats.add(began)
	l, ok := s.active[fleetID]
	if !ok {
		return
	}
	t, ok := l.f.Task(taskID)
	if !ok || t.Status != TaskRunning || t.GoalID != g.ID {
		return
	}
	now := time.Now().UTC()
	t.Report, t.EndedAt, t.Status = report, &now, taskStatusOf(g)
	if why, ok := s.failedBy[g.ID]; ok {
		delete(s.failedBy, g.ID)
		t.Status, t.Report = TaskFailed, why+"\n\n"+report
	}
	if wt != nil {
		t.Worktree = wt
		t.Report += "\n" + branchLine(wt)
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

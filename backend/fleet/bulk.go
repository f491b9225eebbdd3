package fleet

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Action is what the Fleet Dashboard does to a selection of a fleet's tasks at once.
type Action string

const (
	ActionPause  Action = "pause"  // a running task's goal holds
	ActionResume Action = "resume" // a paused (or budget-held) task's goal goes on
	ActionAbort  Action = "abort"  // a running task's goal is aborted; a waiting task will not start
	ActionRetry  Action = "retry"  // a failed or aborted task runs again; a blocked one, what blocks it
	ActionSteer  Action = "steer"  // a message for the task's next turn; a blocked task starts with it
)

// Actions lists the bulk actions, in the order the dashboard offers them.
var Actions = []Action{ActionPause, ActionResume, ActionAbort, ActionRetry, ActionSteer}

// MaxSteerText bounds a steering message: it goes into a model's prompt.
const MaxSteerText = 8000

// Outcome is what a bulk action did to one task.
type Outcome struct {
	TaskID string `json:"taskId"`
	OK     bool   `json:"ok"`
	// Error says why this task was left as it was (it is in a state the action does not fit).
	Error string `json:"error,omitempty"`
}

// steerBlockedFrom introduces the person's message in the first prompt of a blocked task
// they steered past its dependency (it reaches the task through its pane's inbox).
const steerBlockedFrom = "the user, who started this task although a task it depends on did not complete; their instructions"

// Bulk applies one action to each of taskIDs of a fleet, through the goal service (a task's
// goal is a real goal). The request is checked first — a known action, ids of this fleet,
// text for steer — and a mistake is a *FieldError with nothing changed. Each task then gets
// its own Outcome: one task in a state the action does not fit does not stop the others.
func (s *Service) Bulk(ctx context.Context, fleetID string, taskIDs []string, action Action, text string) ([]Outcome, error) {
	if !slices.Contains(Actions, action) {
		names := make([]string, len(Actions))
		for i, a := range Actions {
			names[i] = string(a)
		}
		return nil, &FieldError{Field: "action", Msg: fmt.Sprintf("%q is not an action: use one of %s", action, strings.Join(names, ", "))}
	}
	if len(taskIDs) == 0 {
		return nil, &FieldError{Field: "task_ids", Msg: "select at least one task"}
	}
	text = strings.TrimSpace(text)
	if action == ActionSteer && text == "" {
		return nil, &FieldError{Field: "text", Msg: "write the message to send the selected tasks"}
	}
	if len(text) > MaxSteerText {
		return nil, &FieldError{Field: "text", Msg: fmt.Sprintf("%d characters; at most %d", len(text), MaxSteerText)}
	}
	f, err := s.Get(ctx, fleetID)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, id := range taskIDs {
		if _, ok := f.Task(id); !ok {
			return nil, &FieldError{Field: "task_ids", Msg: fmt.Sprintf("fleet %s has no task %q", fleetID, id)}
		}
		if seen[id] {
			return nil, &FieldError{Field: "task_ids", Msg: fmt.Sprintf("task %q is listed twice", id)}
		}
		seen[id] = true
	}
	// A retry resets what is blocked behind the task it retries: dependencies first, so a
	// selection of a failed task and its dependants retries the failed one once.
	if action == ActionRetry {
		taskIDs = dependencyOrder(f, taskIDs)
	}
	out := make([]Outcome, 0, len(taskIDs))
	for _, id := range taskIDs {
		err := s.act(ctx, fleetID, id, action, text)
		o := Outcome{TaskID: id, OK: err == nil}
		if err != nil {
			o.Error = err.Error()
		}
		out = append(out, o)
	}
	return out, nil
}

// dependencyOrder sorts ids so that a task comes after every selected task it depends on,
// directly or not.
func dependencyOrder(f Fleet, ids []string) []string {
	depth := map[string]int{}
	var deep func(id string, seen map[string]bool) int
	deep = func(id string, seen map[string]bool) int {
		if d, ok := depth[id]; ok {
			return d
		}
		t, ok := f.Task(id)
		if !ok || seen[id] {
			return 0
		}
		seen[id] = true
		d := 0
		for _, dep := range t.DependsOn {
			d = max(d, deep(dep, seen)+1)
		}
		depth[id] = d
		return d
	}
	out := slices.Clone(ids)
	slices.SortStableFunc(out, func(a, b string) int { return deep(a, map[string]bool{}) - deep(b, map[string]bool{}) })
	return out
}

// act applies the action to one task.
func (s *Service) act(ctx context.Context, fleetID, taskID string, action Action, text string) error {
	f, err := s.Get(ctx, fleetID)
	if err != nil {
		return err
	}
	t, _ := f.Task(taskID)
	driven := s.driven(fleetID)
	switch action {
	case ActionPause, ActionResume:
		if t.Status != TaskRunning {
			return fmt.Errorf("task %s is %s; only a running task %ss", taskID, t.Status, action)
		}
		if !driven {
			return fmt.Errorf("fleet %s is %s: resume the fleet first", fleetID, f.Status)
		}
		if action == ActionPause {
			return s.goals.Pause(ctx, t.GoalID)
		}
		return s.goals.Resume(ctx, t.GoalID)
	case ActionAbort:
		switch {
		case t.Status == TaskRunning:
			// The task's watcher records the end and blocks its dependants.
			return s.goals.Abort(ctx, t.GoalID)
		case t.Status == TaskWaiting && driven:
			return s.abortWaiting(fleetID, taskID)
		case t.Status == TaskWaiting:
			return fmt.Errorf("fleet %s is %s: resume it, or abort the whole fleet", fleetID, f.Status)
		}
		return fmt.Errorf("task %s has already ended (%s)", taskID, t.Status)
	case ActionRetry:
		if t.Status == TaskWaiting && driven {
			return nil // an earlier retry of the selection reset it
		}
		if t.Status != TaskBlocked {
			_, err := s.Retry(ctx, fleetID, taskID)
			return err
		}
		// A blocked task runs again once what blocks it has: retry those.
		for _, root := range blockers(f, taskID) {
			if _, err := s.Retry(ctx, fleetID, root); err != nil {
				return fmt.Errorf("retry task %s, which blocks it: %w", root, err)
			}
		}
		return nil
	case ActionSteer:
		switch t.Status {
		case TaskRunning:
			if !driven {
				return fmt.Errorf("fleet %s is %s: resume the fleet first", fleetID, f.Status)
			}
			return s.goals.Steer(ctx, t.GoalID, text)
		case TaskWaiting:
			// Not started yet: the message goes into its first prompt; if its goal started
			// meanwhile, to its next turn.
			s.mu.Lock()
			_, cur := s.taskOfGoalIn(fleetID, t.GoalID)
			if t.GoalID == "" || cur == nil || cur.Status == TaskWaiting {
				defer s.mu.Unlock()
				return s.addToInbox(ctx, t.Pane, InboxItem{From: "the user (instructions for this task)", Text: text, At: time.Now().UTC()})
			}
			s.mu.Unlock()
			return s.goals.Steer(ctx, t.GoalID, text)
		case TaskBlocked:
			return s.steerBlocked(ctx, fleetID, taskID, text)
		}
		return fmt.Errorf("task %s has ended (%s): retry it, or re-open its goal from the Goal Dashboard", taskID, t.Status)
	}
	return errors.New("unknown action")
}

// driven reports whether this process drives the fleet now.
func (s *Service) driven(fleetID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.active[fleetID]
	return ok
}

// blockers are the failed or aborted tasks a blocked task waits behind, through other
// blocked tasks.
func blockers(f Fleet, taskID string) []string {
	var out []string
	seen := map[string]bool{}
	var walk func(id string)
	walk = func(id string) {
		t, ok := f.Task(id)
		if !ok {
			return
		}
		for _, d := range t.DependsOn {
			if seen[d] {
				continue
			}
			seen[d] = true
			dt, _ := f.Task(d)
			switch dt.Status {
			case TaskFailed, TaskAborted:
				out = append(out, d)
			case TaskBlocked:
				walk(d)
			}
		}
	}
	walk(taskID)
	return out
}

// abortWaiting ends a task that has not started: its dependants are blocked as for any
// aborted task, and the fleet ends if nothing is left to run.
func (s *Service) abortWaiting(fleetID, taskID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.active[fleetID]
	if !ok {
		return fmt.Errorf("fleet %s is not running", fleetID)
	}
	t, _ := l.f.Task(taskID)
	if t.Status != TaskWaiting {
		return fmt.Errorf("task %s is %s now", taskID, t.Status)
	}
	now := time.Now().UTC()
	t.Status, t.Report, t.EndedAt = TaskAborted, "Aborted by the user before it started.", &now
	if cancel, ok := s.preparing[fleetID+"/"+taskID]; ok {
		cancel()
	}
	if t.GoalID != "" {
		s.withdraw([]string{t.GoalID}, false) // its queued goal ends aborted too
	}
	s.publishTask(&l.f, t)
	s.schedule(l)
	return nil
}

// steerBlocked starts a blocked task now, without the dependency that failed: the person
// decided it can go on, and their message leads its first prompt (before the dependencies'
// reports, failed ones included, so the agent knows what did not work). The tasks blocked
// behind it wait for it again. It queues like any task: the fleet's concurrency cap and its
// pane still hold.
func (s *Service) steerBlocked(ctx context.Context, fleetID, taskID, text string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.active[fleetID]
	if !ok {
		stored, err := s.repo.Fleet(ctx, fleetID)
		if err != nil {
			return err
		}
		if stored.Status == StatusInterrupted {
			return fmt.Errorf("fleet %s is interrupted: resume it first", fleetID)
		}
		l = &live{f: stored, done: make(chan struct{})}
	}
	t, _ := l.f.Task(taskID)
	if t.Status != TaskBlocked {
		return fmt.Errorf("task %s is %s now", taskID, t.Status)
	}
	if err := s.addToInbox(ctx, t.Pane, InboxItem{From: steerBlockedFrom, Text: text, At: time.Now().UTC()}); err != nil {
		return err
	}
	// It no longer waits for what failed (nor is blocked by it): the person decided it goes on.
	for _, d := range t.DependsOn {
		if dt, ok := l.f.Task(d); ok && dt.Status != TaskCompleted && dt.Status.Ended() && !slices.Contains(t.StartsPast, d) {
			t.StartsPast = append(t.StartsPast, d)
		}
	}
	t.Status, t.Reason, t.Report, t.GoalID, t.StartedAt, t.EndedAt = TaskWaiting, "", "", "", nil, nil
	s.publishTask(&l.f, t)
	// What is blocked behind it only because of it waits for it again.
	behind := map[string]bool{taskID: true}
	for changed := true; changed; {
		changed = false
		for i := range l.f.Tasks {
			d := &l.f.Tasks[i]
			if d.Status == TaskBlocked && slices.ContainsFunc(d.DependsOn, func(id string) bool { return behind[id] }) {
				behind[d.ID], changed = true, true
				d.Status, d.Reason, d.EndedAt = TaskWaiting, "", nil
				s.publishTask(&l.f, d)
			}
		}
	}
	l.aborting = false
	if l.f.Status != StatusRunning {
		l.f.Status = StatusRunning
		s.publishFleet(&l.f)
	}
	s.drive(l)
	s.schedule(l)
	if t.Status != TaskWaiting && t.Status != TaskRunning {
		return fmt.Errorf("task %s could not start: %s", taskID, t.Report)
	}
	return nil
}

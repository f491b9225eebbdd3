package fleet

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/goal/criterion"
	"github.com/clusterspace/clusterspace/backend/policy"
	"github.com/clusterspace/clusterspace/backend/tools"
)

// Caller is who calls an orchestration tool: a goal (GoalID, its PaneID) or a chat
// (WorkspaceID).
type Caller struct {
	GoalID, PaneID, WorkspaceID string
	// User: the person at the dashboard (an agent card's role editor), not an agent.
	User bool
}

func callerOf(c tools.Call) Caller {
	return Caller{GoalID: c.GoalID, PaneID: c.PaneID, WorkspaceID: c.WorkspaceID}
}

func (c Caller) label() string {
	switch {
	case c.User:
		return "the user"
	case c.GoalID != "" && c.PaneID != "":
		return fmt.Sprintf("the agent in pane %s (goal %s)", c.PaneID, c.GoalID)
	case c.GoalID != "":
		return "goal " + c.GoalID
	case c.WorkspaceID != "":
		return "the chat of workspace " + c.WorkspaceID
	}
	return "another agent"
}

func (c Caller) owner() string {
	if c.GoalID != "" {
		return c.GoalID
	}
	return "chat:" + c.WorkspaceID
}

// Assignment is a task an agent hands to another pane (assign_task).
type Assignment struct {
	PaneID      string
	Description string
	Priority    int
	DependsOn   []string
	Criterion   map[string]any
}

// Assign adds a task to the caller's fleet (the fleet its goal is a task of, else a fleet
// the caller owns, made on first use) and schedules it. The task's goal runs under the
// caller's policy: the same risk ceiling, sandbox and tool lists, never more. A chat, which
// has no ceiling, hands on read_only: anything above asks the person.
func (s *Service) Assign(ctx context.Context, c Caller, a Assignment) (Task, Fleet, error) {
	a.PaneID, a.Description = strings.TrimSpace(a.PaneID), strings.TrimSpace(a.Description)
	if a.PaneID == "" {
		return Task{}, Fleet{}, errors.New("pane_id: name the pane the task runs in (list_panes shows them)")
	}
	if a.Description == "" {
		return Task{}, Fleet{}, errors.New("description: say what the task should achieve")
	}
	if a.PaneID == c.PaneID {
		return Task{}, Fleet{}, errors.New("pane_id: that is your own pane; assign the task to another pane")
	}
	pol := policy.Policy{Ceiling: tools.ReadOnly}
	var settings goal.Settings
	if c.GoalID != "" {
		g, err := s.goals.Get(ctx, c.GoalID)
		if err != nil {
			return Task{}, Fleet{}, err
		}
		pol, settings = g.Spec.Policy, g.Spec.Settings
	}
	crit := DefaultCriterion(a.Description)
	if len(a.Criterion) > 0 {
		var b criterion.Builder
		for _, k := range criterion.Keys {
			v, ok := a.Criterion[k]
			if !ok {
				continue
			}
			str, err := scalar(v)
			if err == nil {
				err = b.Set(k, str)
			}
			if err != nil {
				return Task{}, Fleet{}, fmt.Errorf("criterion.%s: %v", k, err)
			}
		}
		for k := range a.Criterion {
			if !isCriterionKey(k) {
				return Task{}, Fleet{}, fmt.Errorf("criterion.%s: unknown key; use %s", k, strings.Join(criterion.Keys, ", "))
			}
		}
		spec, err := b.Spec()
		if err != nil {
			return Task{}, Fleet{}, fmt.Errorf("criterion: %v", err)
		}
		if b.Kinds() == 1 {
			// The model wrote this check: its commands run in the goal's sandbox.
			crit = spec
			crit.ByModel = true
		}
	}

	t, l, err := s.assign(ctx, c, a, pol, settings, crit)
	if err != nil {
		return Task{}, Fleet{}, err
	}
	// The caller learns whether its task runs now or queues.
	f := s.settled(ctx, l)
	got, _ := f.Task(t.ID)
	return *got, f, nil
}

// assign adds the task to the caller's fleet and hands it over (Assign).
func (s *Service) assign(ctx context.Context, c Caller, a Assignment, pol policy.Policy, settings goal.Settings, crit criterion.Spec) (Task, *live, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.fleetOf(c)
	if l == nil {
		now := time.Now().UTC()
		f := Fleet{ID: agent.NewID("fleet-"), Name: "assigned by " + c.label(), Status: StatusRunning,
			Spec: Spec{Concurrency: DefaultConcurrency, Policy: pol, Settings: settings, Owner: c.owner()}, CreatedAt: now, UpdatedAt: now}
		l = &live{f: f, done: make(chan struct{})}
	}
	f := &l.f
	if _, busy := s.goals.WorkingIn(a.PaneID); busy {
		return Task{}, nil, fmt.Errorf("pane_id: a goal already works in pane %s; wait_for_agent on it first, or pick another pane", a.PaneID)
	}
	t := Task{TaskSpec: TaskSpec{ID: fmt.Sprintf("task-%d", len(f.Tasks)+1), Goal: a.Description, Pane: a.PaneID,
		Priority: a.Priority, DependsOn: a.DependsOn, Criterion: crit, Policy: &pol, Settings: &settings, AssignedBy: c.owner()},
		Seq: len(f.Tasks) + 1, Status: TaskWaiting, CreatedAt: time.Now().UTC()}
	for _, exists := f.Task(t.ID); exists; _, exists = f.Task(t.ID) {
		t.ID += "x"
	}
	if err := Validate(append(specsOf(f.Tasks), t.TaskSpec)); err != nil {
		return Task{}, nil, err
	}
	if err := s.ensurePanes(ctx, *f, []Task{t}); err != nil {
		return Task{}, nil, err
	}
	if err := s.goals.Check(ctx, s.goalSpec(f, &t, "")); err != nil {
		return Task{}, nil, err
	}
	f.Tasks = append(f.Tasks, t)
	if _, ok := s.active[f.ID]; !ok {
		s.drive(l)
		s.publishFleet(f)
	}
	s.publishTask(f, &f.Tasks[len(f.Tasks)-1])
	s.schedule(l)
	return t, l, nil
}

func isCriterionKey(k string) bool {
	for _, c := range criterion.Keys {
		if c == k {
			return true
		}
	}
	return false
}

func specsOf(ts []Task) []TaskSpec {
	out := make([]TaskSpec, len(ts))
	for i, t := range ts {
		out[i] = t.TaskSpec
	}
	return out
}

// fleetOf is the running fleet the caller's goal is a task of, else the one it owns. Called
// with s.mu held.
func (s *Service) fleetOf(c Caller) *live {
	if c.GoalID != "" {
		for _, l := range s.active {
			for _, t := range l.f.Tasks {
				if t.GoalID == c.GoalID {
					return l
				}
			}
		}
	}
	for _, l := range s.active {
		if l.f.Spec.Owner == c.owner() {
			return l
		}
	}
	return nil
}

// goalInPane is the goal working in a pane, or about to (a fleet task's goal still queued).
func (s *Service) goalInPane(pane string) (string, bool) {
	if id, ok := s.goals.WorkingIn(pane); ok {
		return id, true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.active {
		for _, t := range l.f.Tasks {
			if !t.Status.Ended() && t.Pane == pane && t.GoalID != "" {
				return t.GoalID, true
			}
		}
	}
	return "", false
}

// WaitForPane blocks until the goal working in the pane ends, ctx ends or timeout passes.
// ok is false when no goal works there.
func (s *Service) WaitForPane(ctx context.Context, pane string, timeout time.Duration) (g goal.Goal, ok bool, err error) {
	id, ok := s.goalInPane(pane)
	if !ok {
		return goal.Goal{}, false, nil
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	g, err = s.goals.Wait(wctx, id)
	if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		g, _ = s.goals.Get(ctx, id)
		return g, true, nil // timed out: g says it still runs
	}
	return g, true, err
}

// Share delivers context to the agent in a pane, or with broadcast to every agent of the
// caller's fleet: a goal running there reads it on its next turn; otherwise it waits in the
// agent's inbox and the next task started in that pane gets it in its first prompt.
func (s *Service) Share(ctx context.Context, c Caller, pane, text string, broadcast bool) (string, error) {
	text, pane = strings.TrimSpace(text), strings.TrimSpace(pane)
	if text == "" {
		return "", errors.New("context: write the context to share")
	}
	if !broadcast {
		if pane == "" {
			return "", errors.New("to_pane_id: name the pane whose agent gets the context, or set broadcast: true to reach every agent of your fleet")
		}
		return s.deliver(ctx, c, pane, text, false)
	}
	if pane != "" {
		return "", errors.New("to_pane_id: give to_pane_id or broadcast: true, not both")
	}
	s.mu.Lock()
	l := s.fleetOf(c)
	var panes []string
	if l != nil {
		for _, t := range l.f.Tasks {
			if t.Pane != c.PaneID && !slices.Contains(panes, t.Pane) {
				panes = append(panes, t.Pane)
			}
		}
	}
	s.mu.Unlock()
	if l == nil {
		return "", errors.New("broadcast: you belong to no running fleet, so there is no one to broadcast to; name a pane with to_pane_id")
	}
	if len(panes) == 0 {
		return "", fmt.Errorf("broadcast: fleet %s has no agent besides you", l.f.ID)
	}
	var lines []string
	for _, p := range panes {
		msg, err := s.deliver(ctx, c, p, text, true)
		if err != nil {
			msg = "not delivered: " + err.Error()
		}
		lines = append(lines, "- "+msg)
	}
	return fmt.Sprintf("Broadcast to the %d other agents of fleet %s:\n%s", len(panes), l.f.ID, strings.Join(lines, "\n")), nil
}

// deliver gives one pane's agent shared context. keep: with no goal there and no task
// waiting for it, it waits in the inbox anyway (a broadcast reaches agents between tasks).
func (s *Service) deliver(ctx context.Context, c Caller, pane, text string, keep bool) (string, error) {
	item := InboxItem{From: c.label(), Text: text, At: time.Now().UTC()}
	if id, ok := s.goals.WorkingIn(pane); ok {
		if err := s.goals.ShareContext(ctx, id, c.label(), text); err == nil {
			item.Delivered = true
			s.mu.Lock()
			err := s.addToInbox(ctx, pane, item)
			s.mu.Unlock()
			if err != nil {
				s.log.Warn("fleet: keep shared context on the agent's card", "pane", pane, "err", err)
			}
			return fmt.Sprintf("Delivered to goal %s in pane %s: it reads it on its next turn.", id, pane), nil
		}
		// It ended meanwhile: the context waits for the pane's next task.
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	waiting := ""
	for _, l := range s.active {
		for _, t := range l.f.Tasks {
			if t.Pane == pane && t.Status == TaskWaiting && waiting == "" {
				waiting = t.ID
			}
		}
	}
	if waiting == "" && !keep {
		return "", fmt.Errorf("to_pane_id: no agent works in pane %s, and no task waits for it; assign_task gives it work", pane)
	}
	if err := s.addToInbox(ctx, pane, item); err != nil {
		return "", err
	}
	if waiting == "" {
		return fmt.Sprintf("No goal runs in pane %s now; the context waits in its agent's inbox for the next task there.", pane), nil
	}
	return fmt.Sprintf("No goal runs in pane %s yet; task %s will start there with this context in its first prompt.", pane, waiting), nil
}

// taskOfGoal is the fleet task whose goal is goalID, not ended. Called with s.mu held.
func (s *Service) taskOfGoal(goalID string) (*live, *Task) {
	if goalID == "" {
		return nil, nil
	}
	for _, l := range s.active {
		for i := range l.f.Tasks {
			// Not ended rather than running: its goal may act before the fleet is told it runs.
			if l.f.Tasks[i].GoalID == goalID && !l.f.Tasks[i].Status.Ended() {
				return l, &l.f.Tasks[i]
			}
		}
	}
	return nil, nil
}

// ownTask is the fleet task the caller's goal works on, when that goal's controls (gc) are
// at hand to end it through: only a task's own goal completes or gives up its task. Called
// with s.mu held.
func (s *Service) ownTask(c Caller, gc tools.GoalControl) *Task {
	if gc == nil {
		return nil
	}
	_, t := s.taskOfGoal(c.GoalID)
	return t
}

// CompleteTask is complete_task: the agent of a fleet task says its task is done. It is a
// claim like claim_complete, verified against the task's criterion before the task
// completes; nobody else can complete a task, since nobody else's word can be verified by
// that task's goal.
func (s *Service) CompleteTask(ctx context.Context, c Caller, gc tools.GoalControl, taskID, summary string) (string, error) {
	summary, taskID = strings.TrimSpace(summary), strings.TrimSpace(taskID)
	if summary == "" {
		return "", errors.New("summary: say what was done and what evidence shows it; it is verified against the task's criterion")
	}
	s.mu.Lock()
	var ownID string
	if own := s.ownTask(c, gc); own != nil {
		ownID = own.ID
	}
	s.mu.Unlock()
	switch {
	case ownID == "":
		return "", errors.New("you are not working on a fleet task, so there is none to complete; a goal ends with claim_complete, and a task you assigned completes when its own agent's claim verifies (wait_for_agent waits for it)")
	case taskID != "" && taskID != ownID:
		return "", fmt.Errorf("task_id: only the agent of task %s can complete it, because completion is verified against that task's criterion by its own goal; tell it with share_context, or end it with fail_task", taskID)
	}
	return fmt.Sprintf("Task %s: %s The task completes only when the claim verifies.", ownID, gc.ClaimComplete(summary)), nil
}

// FailTask is fail_task: the agent of a fleet task gives its task up, or the agent that
// assigned a task ends it. The task ends failed with the reason, and what depends on it is
// blocked.
func (s *Service) FailTask(ctx context.Context, c Caller, gc tools.GoalControl, taskID, reason string) (string, error) {
	reason, taskID = strings.TrimSpace(reason), strings.TrimSpace(taskID)
	if reason == "" {
		return "", errors.New("reason: say why the task failed; it goes into the task's report and its dependants' blocked reason")
	}
	s.mu.Lock()
	own := s.ownTask(c, gc)
	if taskID == "" || (own != nil && own.ID == taskID) {
		if own == nil {
			s.mu.Unlock()
			return "", errors.New("task_id: you are not working on a fleet task; name the task you assigned that should fail (get_fleet_status lists them)")
		}
		id := own.ID
		s.failedBy[c.GoalID] = "Failed by its agent (fail_task): " + reason
		s.mu.Unlock()
		gc.AbortWithReport("fail_task: "+reason, "")
		return fmt.Sprintf("Task %s ends as failed with your reason after this turn; the tasks that depend on it are blocked.", id), nil
	}
	defer s.mu.Unlock()
	var l *live
	var t *Task
	for _, x := range s.active {
		if task, ok := x.f.Task(taskID); ok && (task.AssignedBy == c.owner() || x.f.Spec.Owner == c.owner()) {
			l, t = x, task
		}
	}
	if t == nil {
		return "", fmt.Errorf("task_id: you assigned no running fleet's task %s; only a task's own agent, or the agent that assigned it, can fail it", taskID)
	}
	why := fmt.Sprintf("Failed by %s (fail_task): %s", c.label(), reason)
	switch {
	case t.Status.Ended():
		return "", fmt.Errorf("task_id: task %s has already ended (%s)", taskID, t.Status)
	case t.Status == TaskRunning && t.GoalID != "":
		s.failedBy[t.GoalID] = why
		goalID := t.GoalID
		// Abort outside s.mu: the goal's end comes back through the watcher, which takes it.
		s.mu.Unlock()
		err := s.goals.Abort(ctx, goalID)
		s.mu.Lock()
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("Task %s's goal %s is stopping; the task ends failed with your reason and its dependants are blocked.", taskID, goalID), nil
	}
	if cancel, ok := s.preparing[l.f.ID+"/"+t.ID]; ok {
		cancel()
	}
	if t.GoalID != "" {
		s.withdraw([]string{t.GoalID}, false) // its queued goal ends too
	}
	now := time.Now().UTC()
	t.Status, t.Report, t.EndedAt = TaskFailed, why, &now
	s.publishTask(&l.f, t)
	s.schedule(l)
	return fmt.Sprintf("Task %s failed before it started; the tasks that depend on it are blocked.", taskID), nil
}

package fleet

import (
	"context"
	"errors"
	"fmt"
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
}

func callerOf(c tools.Call) Caller {
	return Caller{GoalID: c.GoalID, PaneID: c.PaneID, WorkspaceID: c.WorkspaceID}
}

func (c Caller) label() string {
	switch {
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
			crit = spec
		}
	}

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
		return Task{}, Fleet{}, fmt.Errorf("pane_id: a goal already works in pane %s; wait_for_agent on it first, or pick another pane", a.PaneID)
	}
	t := Task{TaskSpec: TaskSpec{ID: fmt.Sprintf("task-%d", len(f.Tasks)+1), Goal: a.Description, Pane: a.PaneID,
		Priority: a.Priority, DependsOn: a.DependsOn, Criterion: crit, Policy: &pol, Settings: &settings},
		Seq: len(f.Tasks) + 1, Status: TaskWaiting, CreatedAt: time.Now().UTC()}
	for _, exists := f.Task(t.ID); exists; _, exists = f.Task(t.ID) {
		t.ID += "x"
	}
	if err := Validate(append(specsOf(f.Tasks), t.TaskSpec)); err != nil {
		return Task{}, Fleet{}, err
	}
	if err := s.ensurePanes(ctx, *f, []Task{t}); err != nil {
		return Task{}, Fleet{}, err
	}
	if err := s.goals.Check(ctx, s.goalSpec(f, &t, "")); err != nil {
		return Task{}, Fleet{}, err
	}
	f.Tasks = append(f.Tasks, t)
	if _, ok := s.active[f.ID]; !ok {
		s.active[f.ID] = l
		s.publishFleet(f)
	}
	s.publishTask(f, &f.Tasks[len(f.Tasks)-1])
	s.schedule(l)
	got, _ := l.f.Task(t.ID)
	return *got, l.f, nil
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
			if t.Status == TaskRunning && t.Pane == pane && t.GoalID != "" {
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

// Share delivers context to the agent in a pane: on its next turn if a goal runs there,
// else in the first prompt of the next fleet task started there.
func (s *Service) Share(ctx context.Context, c Caller, pane, text string) (string, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return "", errors.New("context: write the context to share")
	}
	if id, ok := s.goals.WorkingIn(pane); ok {
		if err := s.goals.ShareContext(ctx, id, c.label(), text); err != nil {
			return "", err
		}
		return fmt.Sprintf("Delivered to goal %s in pane %s: it reads it on its next turn.", id, pane), nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.active {
		for _, t := range l.f.Tasks {
			if t.Pane == pane && t.Status == TaskWaiting {
				s.inbox[pane] = append(s.inbox[pane], fmt.Sprintf("[Context shared by %s]: %s", c.label(), text))
				return fmt.Sprintf("No goal runs in pane %s yet; task %s will start there with this context in its first prompt.", pane, t.ID), nil
			}
		}
	}
	return "", fmt.Errorf("to_pane_id: no agent works in pane %s, and no task waits for it; assign_task gives it work", pane)
}

// Package review is a piece of work's change as a person reviews it: the branch of a fleet
// task or of a goal run in its own worktree, its diff against where it started, the comments
// a person leaves on it, and sending them back to its agent as feedback.
package review

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/clusterspace/clusterspace/backend/fleet"
	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/goal/criterion"
	"github.com/clusterspace/clusterspace/backend/worktree"
)

// ErrNotFound is a ref that names no task or goal, or a comment id that names no comment.
var ErrNotFound = errors.New("not found")

// FieldError names the argument of a request that is wrong.
type FieldError struct{ Field, Msg string }

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// Kinds of subject.
const (
	KindTask = "task"
	KindGoal = "goal"
)

// Subject is a piece of work with a branch: a fleet task run in its own worktree, or a goal
// run with its own.
type Subject struct {
	// Ref is the subject's canonical name, the key its comments are kept under:
	// "FLEET_ID/TASK_ID" for a task, the goal's id for a goal.
	Ref     string `json:"ref"`
	Kind    string `json:"kind"` // KindTask or KindGoal
	FleetID string `json:"fleetId,omitempty"`
	TaskID  string `json:"taskId,omitempty"`
	// GoalID is the goal that did the work (a task's latest run).
	GoalID    string            `json:"goalId,omitempty"`
	Worktree  worktree.Worktree `json:"worktree"`
	Criterion criterion.Spec    `json:"criterion"`
	// Status is the task's or the goal's status.
	Status string `json:"status"`
	// Review is a task's review (land status, feedback, story); nil for a goal, or a task
	// not reviewed yet.
	Review *fleet.Review `json:"review,omitempty"`
}

// Running reports whether the work is still going on (or waiting to), so feedback cannot
// re-open it: steering is how to reach it.
func (s Subject) Running() bool {
	if s.Kind == KindTask {
		return !fleet.TaskStatus(s.Status).Ended()
	}
	return !goal.Status(s.Status).Finished()
}

// Fleets is what Resolve reads of the fleets (fleet.Service has it; StoreFleets adapts the
// store).
type Fleets interface {
	Get(ctx context.Context, id string) (fleet.Fleet, error)
	List(ctx context.Context) ([]fleet.Fleet, error)
}

// Goals is what Resolve reads of the goals (goal.Service has it; StoreGoals adapts the store).
type Goals interface {
	Get(ctx context.Context, id string) (goal.Goal, error)
}

// StoredFleets and StoredGoals are the store's reading methods (package store has them).
type StoredFleets interface {
	Fleet(ctx context.Context, id string) (fleet.Fleet, error)
	ListFleets(ctx context.Context) ([]fleet.Fleet, error)
}

type StoredGoals interface {
	Goal(ctx context.Context, id string) (goal.Goal, error)
}

// StoreFleets reads the fleets from the store, for a door without the fleet service (the
// CLI's diff reads while another process owns the data dir).
func StoreFleets(s StoredFleets) Fleets { return storeFleets{s} }

// StoreGoals reads the goals from the store.
func StoreGoals(s StoredGoals) Goals { return storeGoals{s} }

type storeFleets struct{ s StoredFleets }

func (f storeFleets) Get(ctx context.Context, id string) (fleet.Fleet, error) {
	return f.s.Fleet(ctx, id)
}
func (f storeFleets) List(ctx context.Context) ([]fleet.Fleet, error) { return f.s.ListFleets(ctx) }

type storeGoals struct{ s StoredGoals }

func (g storeGoals) Get(ctx context.Context, id string) (goal.Goal, error) { return g.s.Goal(ctx, id) }

// Resolve finds the subject a ref names: "FLEET_ID/TASK_ID", or a goal id — a goal run in its
// own worktree, or the goal of a fleet task (then that task, the latest whose goal it is).
// A ref that names nothing wraps ErrNotFound; one that names work without a branch is a
// *FieldError on "ref". Both say what to give instead.
func Resolve(ctx context.Context, fleets Fleets, goals Goals, ref string) (Subject, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return Subject{}, &FieldError{"ref", "is empty: give FLEET_ID/TASK_ID, or the id of a goal run with its own worktree"}
	}
	if err := goal.CheckText(ref, false); err != nil {
		return Subject{}, &FieldError{"ref", fmt.Sprintf("%q %v", ref, err)}
	}
	if fleetID, taskID, ok := strings.Cut(ref, "/"); ok {
		return resolveTask(ctx, fleets, fleetID, taskID)
	}
	return resolveGoal(ctx, fleets, goals, ref)
}

// resolveTask finds a fleet's task by id.
func resolveTask(ctx context.Context, fleets Fleets, fleetID, taskID string) (Subject, error) {
	if fleetID == "" || taskID == "" || strings.Contains(taskID, "/") {
		return Subject{}, &FieldError{"ref", fmt.Sprintf("%q is not FLEET_ID/TASK_ID: give one fleet id and one task id, such as fleet-1a2b3c/api", fleetID+"/"+taskID)}
	}
	if fleets == nil {
		return Subject{}, fmt.Errorf("fleets are not running here, so task %s/%s cannot be read: %w", fleetID, taskID, ErrNotFound)
	}
	f, err := fleets.Get(ctx, fleetID)
	if errors.Is(err, fleet.ErrNotFound) {
		return Subject{}, fmt.Errorf("fleet %s does not exist: give FLEET_ID/TASK_ID of a fleet that `clusterspace fleet list` shows: %w", fleetID, ErrNotFound)
	}
	if err != nil {
		return Subject{}, err
	}
	t, ok := f.Task(taskID)
	if !ok {
		return Subject{}, fmt.Errorf("fleet %s has no task %s; its tasks are %s: %w", fleetID, taskID, taskIDs(f), ErrNotFound)
	}
	return taskSubject(f, t)
}

// taskSubject is a task as a subject; a task without a worktree has no branch to review.
func taskSubject(f fleet.Fleet, t *fleet.Task) (Subject, error) {
	if t.Worktree == nil {
		what := "ran"
		if !t.Status.Ended() && t.StartedAt == nil {
			what = "has not started yet, or runs"
		}
		return Subject{}, &FieldError{"ref", fmt.Sprintf("task %s of fleet %s %s without a worktree, so it has no branch to review: give the fleet (or the task) isolation: worktree", t.ID, f.ID, what)}
	}
	return Subject{Ref: f.ID + "/" + t.ID, Kind: KindTask, FleetID: f.ID, TaskID: t.ID, GoalID: t.GoalID,
		Worktree: *t.Worktree, Criterion: t.Criterion, Status: string(t.Status), Review: t.Review}, nil
}

// resolveGoal finds the work a goal id names: a fleet task whose goal it is, else the goal's
// own worktree. A fleet's id alone is answered with its tasks' refs.
func resolveGoal(ctx context.Context, fleets Fleets, goals Goals, id string) (Subject, error) {
	var g goal.Goal
	var gerr error = goal.ErrNotFound
	if goals != nil {
		g, gerr = goals.Get(ctx, id)
		if gerr != nil && !errors.Is(gerr, goal.ErrNotFound) {
			return Subject{}, gerr
		}
	}
	if fleets != nil {
		f, t, err := taskOfGoal(ctx, fleets, id, g.Spec.Group)
		if err != nil {
			return Subject{}, err
		}
		if t != nil {
			return taskSubject(f, t)
		}
	}
	if gerr == nil {
		if g.Spec.Worktree == nil {
			return Subject{}, &FieldError{"ref", fmt.Sprintf("goal %s ran without its own worktree, so it has no branch to review: run a goal with `clusterspace goal run --worktree`, or give a fleet task as FLEET_ID/TASK_ID", id)}
		}
		return Subject{Ref: g.ID, Kind: KindGoal, GoalID: g.ID, Worktree: *g.Spec.Worktree, Criterion: g.Spec.Criterion, Status: string(g.Status)}, nil
	}
	if fleets != nil {
		if f, err := fleets.Get(ctx, id); err == nil {
			return Subject{}, &FieldError{"ref", fmt.Sprintf("%s is a fleet; review one of its tasks as %s/TASK_ID (its tasks are %s)", id, id, taskIDs(f))}
		}
	}
	return Subject{}, fmt.Errorf("no goal or fleet task is %s: give FLEET_ID/TASK_ID (see `clusterspace fleet show FLEET_ID`), or the id of a goal run with its own worktree: %w", id, ErrNotFound)
}

// taskOfGoal finds the task whose goal id is goalID: in the fleet the goal was grouped with
// when there is one, else in every fleet; of several (a task run again keeps none of its old
// goals, but a fleet run twice from one file may), the latest.
func taskOfGoal(ctx context.Context, fleets Fleets, goalID, group string) (fleet.Fleet, *fleet.Task, error) {
	var list []fleet.Fleet
	if group != "" {
		if f, err := fleets.Get(ctx, group); err == nil {
			list = []fleet.Fleet{f}
		}
	}
	if list == nil {
		all, err := fleets.List(ctx)
		if err != nil {
			return fleet.Fleet{}, nil, err
		}
		list = all
	}
	var bestF fleet.Fleet
	var best *fleet.Task
	for i := range list {
		for j := range list[i].Tasks {
			t := &list[i].Tasks[j]
			if t.GoalID != goalID {
				continue
			}
			if best == nil || t.CreatedAt.After(best.CreatedAt) {
				bestF, best = list[i], t
			}
		}
	}
	return bestF, best, nil
}

// taskIDs lists a fleet's task ids for a message.
func taskIDs(f fleet.Fleet) string {
	if len(f.Tasks) == 0 {
		return "none"
	}
	ids := make([]string, len(f.Tasks))
	for i, t := range f.Tasks {
		ids[i] = t.ID
	}
	return strings.Join(ids, ", ")
}

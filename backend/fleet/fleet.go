package fleet

import (
	"context"
	"errors"
	"time"

	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/policy"
)

// ErrNotFound is returned for an unknown fleet.
var ErrNotFound = errors.New("not found")

// Status is where a fleet is.
type Status string

const (
	StatusRunning     Status = "running"
	StatusInterrupted Status = "interrupted" // the process stopped while it ran; `fleet resume` goes on
	StatusCompleted   Status = "completed"
	StatusFailed      Status = "failed" // a task failed, aborted itself or is blocked
	StatusAborted     Status = "aborted"
)

// Finished reports whether the fleet has ended.
func (s Status) Finished() bool {
	return s == StatusCompleted || s == StatusFailed || s == StatusAborted
}

// TaskStatus is where a task is.
type TaskStatus string

const (
	TaskWaiting   TaskStatus = "waiting" // for its dependencies, its worktree, or its turn in the Goal Runner's queue
	TaskRunning   TaskStatus = "running" // its goal runs (it left the queue) and has not ended
	TaskCompleted TaskStatus = "completed"
	TaskFailed    TaskStatus = "failed"
	TaskAborted   TaskStatus = "aborted"
	TaskBlocked   TaskStatus = "blocked" // a task it depends on failed or was aborted; Reason says which
)

// Ended reports whether the task will not run (again) on its own.
func (s TaskStatus) Ended() bool { return s != TaskWaiting && s != TaskRunning }

// Spec is how a fleet's tasks run: the template every task's goal starts from.
type Spec struct {
	Concurrency int           `json:"concurrency"`
	Policy      policy.Policy `json:"policy"`
	Settings    goal.Settings `json:"settings"`
	// Owner is the goal whose agent made the fleet with assign_task ("" for a file's fleet).
	Owner string `json:"owner,omitempty"`
	// Isolation is the file's fleet-wide `isolation:` (IsolationWorktree or ""); a task's own
	// setting wins. Setup runs in each new worktree before its task starts (`setup:`).
	Isolation string `json:"isolation,omitempty"`
	Setup     string `json:"setup,omitempty"`
	// Base is the commit the fleet's isolated tasks branch from: the repository's HEAD when
	// the fleet was created ("" without isolation).
	Base string `json:"base,omitempty"`
}

// Task is a task as stored and shown.
type Task struct {
	// TaskSpec's fields are inline on the wire; the generated TypeScript extends it.
	TaskSpec `tstype:",extends"`

	Seq       int        `json:"seq"` // its place in the file; the queue's age order
	Status    TaskStatus `json:"status"`
	Reason    string     `json:"reason,omitempty"` // why it is blocked
	GoalID    string     `json:"goalId,omitempty"`
	Report    string     `json:"report,omitempty"` // its goal's final report (claim and verification)
	CreatedAt time.Time  `json:"createdAt"`
	StartedAt *time.Time `json:"startedAt,omitempty"`
	EndedAt   *time.Time `json:"endedAt,omitempty"`
	// Worktree is the task's own git worktree and branch (isolation: worktree), nil without.
	Worktree *Worktree `json:"worktree,omitempty"`
}

// Fleet is a fleet as stored and shown.
type Fleet struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Status    Status    `json:"status"`
	Spec      Spec      `json:"spec"`
	Tasks     []Task    `json:"tasks"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// Task returns the task with that id.
func (f *Fleet) Task(id string) (*Task, bool) {
	for i := range f.Tasks {
		if f.Tasks[i].ID == id {
			return &f.Tasks[i], true
		}
	}
	return nil, false
}

// Counts tallies the tasks by status.
func (f Fleet) Counts() map[TaskStatus]int {
	n := map[TaskStatus]int{}
	for _, t := range f.Tasks {
		n[t.Status]++
	}
	return n
}

// Repo stores fleets.
type Repo interface {
	// SaveFleet writes the fleet row and every task, in one transaction.
	SaveFleet(ctx context.Context, f Fleet) error
	Fleet(ctx context.Context, id string) (Fleet, error)
	// ListFleets returns every fleet, newest first.
	ListFleets(ctx context.Context) ([]Fleet, error)
	DeleteFleet(ctx context.Context, id string) error
	// SaveAgent writes a pane's agent (role, purpose, inbox).
	SaveAgent(ctx context.Context, a AgentRecord) error
	// AgentRecords returns every stored agent, by pane id.
	AgentRecords(ctx context.Context) ([]AgentRecord, error)
}

package fleet

import (
	"context"
	"errors"
	"time"

	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/policy"
	"github.com/clusterspace/clusterspace/backend/worktree"
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
	// Copy lists the person's untracked files copied into each new worktree (`copy:`).
	Copy []string `json:"copy,omitempty"`
	// Base is the commit the fleet's isolated tasks branch from: the repository's HEAD when
	// the fleet was created ("" without isolation).
	Base string `json:"base,omitempty"`
	// Target is the branch the tasks' work lands on: the branch checked out when the fleet
	// was created ("" without isolation, or on a detached HEAD).
	Target string `json:"target,omitempty"`
	// LandCheck is the repository's own check (`land: check:` in the fleet file), run on the
	// target with a task's work on it before the target moves.
	LandCheck string `json:"landCheck,omitempty"`
	// LandStrategy is the file's `land: strategy:` ("": the repository's remembered choice).
	LandStrategy string `json:"landStrategy,omitempty"`
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
	Worktree *worktree.Worktree `json:"worktree,omitempty"`
	// Review is where the task's work stands with its target, and what the person said of
	// it (nil until it is reviewed, landed or refused).
	Review *Review `json:"review,omitempty"`
}

// LandStatus is where a task's work stands with its target branch.
type LandStatus string

const (
	LandLanded  LandStatus = "landed"  // its branch is on the target, verified there
	LandRefused LandStatus = "refused" // the last landing conflicted or a check failed on the result
)

// Review is what happened to a task's work after it verified: landing, refusals and the
// person's review, and the feedback its next run starts with.
type Review struct {
	Land       LandStatus `json:"land,omitempty"`
	LandCommit string     `json:"landCommit,omitempty"` // the target's tip with the work on it
	// Feedback is what the task's next run starts with (review comments, a refusal's
	// conflict or failing output); it is cleared once that run has it.
	Feedback string      `json:"feedback,omitempty"`
	Story    []StoryNote `json:"story"`
}

// StoryNote is one entry of a task's story after its run: a landing, a refusal, a review
// sent back, a reopening.
type StoryNote struct {
	At     time.Time `json:"at"`
	Kind   string    `json:"kind"` // "landed" | "refused" | "reopened" | "review"
	Text   string    `json:"text"`
	Commit string    `json:"commit,omitempty"`
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

package goal

import (
	"context"
	"errors"

	"github.com/clusterspace/clusterspace/backend/agent"

	"github.com/clusterspace/clusterspace/backend/llm"
)

// ErrNotFound means no goal (or approval) has that id.
var ErrNotFound = errors.New("not found")

// Commit is what one runner step produced, written in one transaction so that a crash leaves
// either all of it or none of it.
type Commit struct {
	Goal *Goal
	// Messages are appended to the conversation, numbered from MessagesFrom.
	Messages     []llm.Message
	MessagesFrom int
	// TruncateMessagesFrom, when set, removes stored messages from that number on (a resumed
	// goal rewrites a tail it had not finished).
	TruncateMessagesFrom *int
	Steps                []Step
	// Events get their Seq (and At, if zero) from the store.
	Events []Event
	// ID names the goal when Goal is nil.
	ID string
}

// GoalID is the goal the commit belongs to.
func (c *Commit) GoalID() string {
	if c.Goal != nil {
		return c.Goal.ID
	}
	return c.ID
}

// Repo is the persistence the goal service needs; the store implements it.
type Repo interface {
	CommitGoal(ctx context.Context, c *Commit) error
	Goal(ctx context.Context, id string) (Goal, error)
	ListGoals(ctx context.Context) ([]Goal, error)
	// CountGoals is how many goals are stored (cheap: the start of every goal asks it).
	CountGoals(ctx context.Context) (int, error)
	DeleteGoal(ctx context.Context, id string) error
	GoalMessages(ctx context.Context, id string) ([]llm.Message, error)
	GoalSteps(ctx context.Context, id string, after, limit int) ([]Step, error)
	// GoalStepImage returns picture n of step index, or an error wrapping ErrNotFound.
	GoalStepImage(ctx context.Context, id string, index, n int) (llm.Image, error)
	GoalEvents(ctx context.Context, id string, after int64) ([]Event, error)
	agent.ApprovalRepo
}

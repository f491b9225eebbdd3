package goal

import (
	"context"
	"encoding/json"
	"errors"
	"time"

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
	DeleteGoal(ctx context.Context, id string) error
	GoalMessages(ctx context.Context, id string) ([]llm.Message, error)
	GoalSteps(ctx context.Context, id string, after, limit int) ([]Step, error)
	// GoalStepImage returns picture n of step index, or an error wrapping ErrNotFound.
	GoalStepImage(ctx context.Context, id string, index, n int) (llm.Image, error)
	GoalEvents(ctx context.Context, id string, after int64) ([]Event, error)
	SaveApproval(ctx context.Context, a Approval) error
	Approvals(ctx context.Context, pendingOnly bool) ([]Approval, error)
}

// ApprovalStatus is a request's state, or the user's answer.
type ApprovalStatus string

const (
	ApprovalPending   ApprovalStatus = "pending"
	ApprovalAllowOnce ApprovalStatus = "allow_once"
	ApprovalAllowGoal ApprovalStatus = "allow_goal" // allow this tool for the rest of the goal
	ApprovalDeny      ApprovalStatus = "deny"
)

// Approval is a tool call waiting for (or answered by) the user.
type Approval struct {
	ID           string          `json:"id"`
	GoalID       string          `json:"goalId"`
	CallID       string          `json:"callId"`
	Tool         string          `json:"tool"`
	Args         json.RawMessage `json:"args"`
	Risk         string          `json:"risk"`
	Reason       string          `json:"reason"`
	Status       ApprovalStatus  `json:"status"`
	AnswerReason string          `json:"answerReason,omitempty"`
	CreatedAt    time.Time       `json:"createdAt"`
	AnsweredAt   *time.Time      `json:"answeredAt,omitempty"`
}

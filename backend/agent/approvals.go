package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/clusterspace/clusterspace/backend/internal/randid"
)

// ApprovalStatus is a request's state, or the user's answer.
type ApprovalStatus string

const (
	ApprovalPending   ApprovalStatus = "pending"
	ApprovalAllowOnce ApprovalStatus = "allow_once"
	// ApprovalAllowScope allows the tool for the rest of the goal, or of the chat session,
	// that asked. Its wire value predates chat approvals and stays for the UIs and API users.
	ApprovalAllowScope ApprovalStatus = "allow_goal"
	ApprovalDeny       ApprovalStatus = "deny"
)

// Approval is a tool call waiting for (or answered by) the user. It belongs to a goal
// (GoalID) or to a workspace's chat (WorkspaceID).
type Approval struct {
	ID          string `json:"id"`
	GoalID      string `json:"goalId,omitempty"`
	WorkspaceID string `json:"workspaceId,omitempty"`
	// ConversationID is the chat conversation a workspace's request belongs to.
	ConversationID string          `json:"conversationId,omitempty"`
	CallID         string          `json:"callId"`
	Tool           string          `json:"tool"`
	Args           json.RawMessage `json:"args"`
	Risk           string          `json:"risk"`
	Reason         string          `json:"reason"`
	Status         ApprovalStatus  `json:"status"`
	AnswerReason   string          `json:"answerReason,omitempty"`
	CreatedAt      time.Time       `json:"createdAt"`
	AnsweredAt     *time.Time      `json:"answeredAt,omitempty"`
}

// ApprovalRepo keeps approvals; the store implements it.
type ApprovalRepo interface {
	SaveApproval(ctx context.Context, a Approval) error
	// Approvals returns approvals, pending ones only if pendingOnly, oldest first.
	Approvals(ctx context.Context, pendingOnly bool) ([]Approval, error)
}

// AutoAnswer answers approvals without a person (the CLI's --approve allow|deny). It returns
// false to leave the request to the user.
type AutoAnswer func(Approval) (status ApprovalStatus, reason string, ok bool)

// ErrNotWaiting means no request is waiting under that id: it was answered already, or
// whoever asked stopped waiting.
var ErrNotWaiting = errors.New("not waiting for an answer")

// AnswerError names the field of an answer that is wrong.
type AnswerError struct{ Field, Msg string }

func (e *AnswerError) Error() string { return e.Field + ": " + e.Msg }

// Approvals is the one place tool calls wait for the user, for goals and chats alike: a
// request is stored before it is announced, answered from either door (window or server),
// and closed when whoever asked stops waiting. There is no silent auto-deny timer: only a
// person, an explicit AutoAnswer, or the asker stopping ends the wait.
type Approvals struct {
	repo ApprovalRepo
	auto AutoAnswer

	mu      sync.Mutex
	waiting map[string]*waiter
}

type waiter struct {
	req Approval
	ch  chan Approval
}

// NewApprovals returns the approval desk. auto may be nil (every request waits for a person);
// repo nil keeps requests in memory only.
func NewApprovals(repo ApprovalRepo, auto AutoAnswer) *Approvals {
	return &Approvals{repo: repo, auto: auto, waiting: map[string]*waiter{}}
}

// Open records the request and makes it answerable, so that it can be announced; wait then
// blocks until it is answered or ctx ends. When ctx ends, wait returns the request still
// pending and the context's cause: the asker decides whether to Withdraw it or leave it
// pending (to ask again after a restart).
func (a *Approvals) Open(ctx context.Context, req Approval) (wait func(context.Context) (Approval, error), err error) {
	if req.ID == "" {
		req.ID = NewID("appr-")
	}
	req.Status = ApprovalPending
	if err := a.Save(ctx, req); err != nil {
		return nil, fmt.Errorf("could not record the approval request: %w", err)
	}
	if a.auto != nil {
		if status, reason, ok := a.auto(req); ok {
			ans, err := a.settle(ctx, req, status, reason)
			return func(context.Context) (Approval, error) { return ans, err }, nil
		}
	}
	w := &waiter{req: req, ch: make(chan Approval, 1)}
	a.mu.Lock()
	a.waiting[req.ID] = w
	a.mu.Unlock()
	return func(ctx context.Context) (Approval, error) {
		defer a.forget(req.ID)
		select {
		case ans := <-w.ch:
			return ans, nil
		case <-ctx.Done():
			return req, context.Cause(ctx)
		}
	}, nil
}

func (a *Approvals) forget(id string) {
	a.mu.Lock()
	delete(a.waiting, id)
	a.mu.Unlock()
}

// Withdraw closes a request nobody waits for any more, so no stale question stays on screen.
func (a *Approvals) Withdraw(ctx context.Context, req Approval, why string) Approval {
	a.forget(req.ID)
	// Best effort: the asker's own story says what happened, and a pending row left behind
	// is closed when its goal or chat resumes.
	ans, _ := a.settle(ctx, req, ApprovalDeny, "withdrawn: "+why)
	return ans
}

func (a *Approvals) settle(ctx context.Context, req Approval, status ApprovalStatus, reason string) (Approval, error) {
	now := time.Now().UTC()
	req.Status, req.AnswerReason, req.AnsweredAt = status, reason, &now
	return req, a.Save(ctx, req)
}

// Answer resolves a waiting request: allow_once, allow_goal (the tool for the rest of the
// goal or chat) or deny.
func (a *Approvals) Answer(ctx context.Context, id string, status ApprovalStatus, reason string) (Approval, error) {
	if status != ApprovalAllowOnce && status != ApprovalAllowScope && status != ApprovalDeny {
		return Approval{}, &AnswerError{"status", fmt.Sprintf("%q is not an answer; use allow_once, allow_goal or deny", status)}
	}
	a.mu.Lock()
	w, ok := a.waiting[id]
	if ok {
		delete(a.waiting, id)
	}
	a.mu.Unlock()
	if !ok {
		return Approval{}, fmt.Errorf("approval %q is %w (answered already, or whoever asked stopped waiting)", id, ErrNotWaiting)
	}
	ans, err := a.settle(ctx, w.req, status, reason)
	w.ch <- ans
	return ans, err
}

// Waiting lists the requests someone waits on now that keep says are theirs, oldest first.
func (a *Approvals) Waiting(keep func(Approval) bool) []Approval {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := []Approval{}
	for _, w := range a.waiting {
		if keep == nil || keep(w.req) {
			out = append(out, w.req)
		}
	}
	slices.SortFunc(out, func(x, y Approval) int { return x.CreatedAt.Compare(y.CreatedAt) })
	return out
}

// Stored lists the pending requests in the store that keep says are theirs, oldest first,
// including those a dead process left behind.
func (a *Approvals) Stored(ctx context.Context, keep func(Approval) bool) ([]Approval, error) {
	if a.repo == nil {
		return a.Waiting(keep), nil
	}
	all, err := a.repo.Approvals(ctx, true)
	if err != nil {
		return nil, err
	}
	out := []Approval{}
	for _, p := range all {
		if keep == nil || keep(p) {
			out = append(out, p)
		}
	}
	return out, nil
}

// Save writes a request as it is (closing one a dead process left pending, for example).
// The write outlives ctx: a request must not stay pending because its asker stopped.
func (a *Approvals) Save(ctx context.Context, req Approval) error {
	if a.repo == nil {
		return nil
	}
	return a.repo.SaveApproval(context.WithoutCancel(ctx), req)
}

// NewID returns a random id with the prefix, for approvals, turns and goals.
func NewID(prefix string) string { return randid.New(prefix) }

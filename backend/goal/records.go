package goal

import (
	"context"
	"fmt"
	"slices"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/llm"
)

// What the doors read of the stored goals, and their deletion and pruning.

// Get returns a goal.
func (s *Service) Get(ctx context.Context, id string) (Goal, error) {
	s.mu.Lock()
	lost, ok := s.lost[id]
	s.mu.Unlock()
	if ok {
		return lost, nil // its end the store would not take
	}
	return s.repo.Goal(ctx, id)
}

// List returns every goal, newest activity first.
func (s *Service) List(ctx context.Context) ([]Goal, error) {
	gs, err := s.repo.ListGoals(ctx)
	if gs == nil {
		gs = []Goal{}
	}
	return gs, err
}

// Steps returns up to limit steps of a goal after index after.
func (s *Service) Steps(ctx context.Context, id string, after, limit int) ([]Step, error) {
	return s.repo.GoalSteps(ctx, id, after, limit)
}

// StepImage returns picture n (from 0) of a step's result.
func (s *Service) StepImage(ctx context.Context, id string, index, n int) (llm.Image, error) {
	return s.repo.GoalStepImage(ctx, id, index, n)
}

// History returns a goal's stored events after seq.
func (s *Service) History(ctx context.Context, id string, after int64) ([]Event, error) {
	return s.repo.GoalEvents(ctx, id, after)
}

// PendingApprovals lists the questions waiting for the user that are not a chat's (a chat's
// are the chat's): the goals', and those of MCP clients (backend/mcpserve), which carry the
// workspace they work in but no chat conversation.
func (s *Service) PendingApprovals(ctx context.Context) ([]agent.Approval, error) {
	return s.approvals.Stored(ctx, func(a agent.Approval) bool { return a.GoalID != "" || a.ConversationID == "" })
}

// AnswerApproval answers a waiting approval request: allow_once, allow_goal or deny.
func (s *Service) AnswerApproval(ctx context.Context, id string, status agent.ApprovalStatus, reason string) (agent.Approval, error) {
	return s.approvals.Answer(ctx, id, status, reason)
}

// Delete removes a goal that is not running.
func (s *Service) Delete(ctx context.Context, id string) error {
	s.mu.Lock()
	_, running := s.runs[id]
	s.queue = slices.DeleteFunc(s.queue, func(q string) bool { return q == id })
	s.mu.Unlock()
	if running {
		return fmt.Errorf("goal %s is running: abort it before deleting it", id)
	}
	return s.repo.DeleteGoal(ctx, id)
}

// Prune deletes every finished goal; it returns how many.
func (s *Service) Prune(ctx context.Context) (int, error) {
	gs, err := s.repo.ListGoals(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, g := range gs {
		if g.Status.Finished() && s.Delete(ctx, g.ID) == nil {
			n++
		}
	}
	return n, nil
}

// prune keeps at most MaxGoals goals: in-flight ones always, then the newest finished ones.
func (s *Service) prune(ctx context.Context) {
	// Counting first keeps a goal's start cheap: the whole list is read only when some must go.
	if n, err := s.repo.CountGoals(ctx); err != nil || n <= s.opts.MaxGoals {
		return
	}
	gs, err := s.repo.ListGoals(ctx)
	if err != nil || len(gs) <= s.opts.MaxGoals {
		return
	}
	excess := len(gs) - s.opts.MaxGoals
	for i := len(gs) - 1; i >= 0 && excess > 0; i-- { // oldest activity last
		if gs[i].Status.Finished() && s.Delete(ctx, gs[i].ID) == nil {
			excess--
		}
	}
}

package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/rpc"
	"github.com/clusterspace/clusterspace/backend/tools"
	"github.com/clusterspace/clusterspace/backend/worktree"
)

// maxStepPage bounds one page of a goal's step log.
const maxStepPage = 500

// GoalsResult is every goal, newest activity first.
type GoalsResult struct {
	Goals []goal.Goal `json:"goals"`
}

// StartGoalArgs is the goal to validate and queue; a refusal names the spec's field.
// Worktree runs it in its own git worktree and branch, made from the repository its sandbox
// (else its work dir) is in (REST: ?worktree=true).
type StartGoalArgs struct {
	Spec     goal.Spec `json:"spec"`
	Worktree bool      `json:"worktree,omitempty"`
}

// GoalStepsArgs asks for up to limit steps with an index above after (limit 0 or above 500:
// 500).
type GoalStepsArgs struct {
	ID    string `json:"id"`
	After int    `json:"after"`
	Limit int    `json:"limit"`
}

// StepsResult is a page of a goal's step log, in order.
type StepsResult struct {
	Steps []goal.Step `json:"steps"`
}

// GoalStepImageArgs names picture n (from 0) of step index's result.
type GoalStepImageArgs struct {
	ID    string `json:"id"`
	Index int    `json:"index"`
	N     int    `json:"n"`
}

// GoalEventsArgs asks for a goal's stored events with a seq above after.
type GoalEventsArgs struct {
	ID    string `json:"id"`
	After int64  `json:"after"`
}

// EventsResult is a goal's stored events, in order.
type EventsResult struct {
	Events []goal.Event `json:"events"`
}

// SteerGoalArgs is a message the model gets on its next turn.
type SteerGoalArgs struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

// ReopenGoalArgs continues a finished goal with the user's feedback.
type ReopenGoalArgs struct {
	ID       string `json:"id"`
	Feedback string `json:"feedback"`
}

// RaiseGoalBudgetArgs sets a new budget (0 keeps that part); a goal held for its budget goes on.
type RaiseGoalBudgetArgs struct {
	ID           string  `json:"id"`
	BudgetUSD    float64 `json:"budgetUsd"`
	BudgetTokens int     `json:"budgetTokens"`
}

// PruneResult is how many finished goals were deleted.
type PruneResult struct {
	Deleted int `json:"deleted"`
}

// ApprovalsResult is the tool calls waiting for the user's answer.
type ApprovalsResult struct {
	Approvals []agent.Approval `json:"approvals"`
}

// AnswerApprovalArgs answers a waiting tool call: allow_once, allow_goal or deny, with an
// optional reason the model is told.
type AnswerApprovalArgs struct {
	ID     string               `json:"id"`
	Status agent.ApprovalStatus `json:"status"`
	Reason string               `json:"reason"`
}

// ToolsResult is the registry's tools, with their risk, for the allow/deny pickers.
type ToolsResult struct {
	Tools []tools.Definition `json:"tools"`
}

// goalControl classifies a goal control's refusal: bad input and unknown goals as every
// service error, and anything else (pausing a finished goal, say) as not fitting the goal's
// state (409).
func goalControl(err error) error {
	var fe *goal.FieldError
	var ae *agent.AnswerError
	if err == nil || errors.As(err, &fe) || errors.As(err, &ae) || errors.Is(err, goal.ErrNotFound) || errors.Is(err, agent.ErrNotWaiting) {
		return err
	}
	return Conflict(err)
}

func addGoals(t *rpc.Table, s Services) {
	g := s.Goals
	rpc.Add(t, rpc.Method{Name: "ListGoals", Route: "GET /api/goals"}, func(ctx context.Context, _ rpc.None) (GoalsResult, error) {
		gs, err := g.List(ctx)
		return GoalsResult{Goals: gs}, err
	})
	rpc.Add(t, rpc.Method{Name: "StartGoal", Route: "POST /api/goals", Body: "spec", Status: http.StatusCreated}, func(ctx context.Context, a StartGoalArgs) (goal.Goal, error) {
		if a.Worktree && a.Spec.Worktree == nil {
			a.Spec.Worktree = &worktree.Worktree{} // Start makes it
		}
		return g.Start(ctx, a.Spec)
	})
	rpc.Add(t, rpc.Method{Name: "PruneGoals", Route: "POST /api/goals/prune"}, func(ctx context.Context, _ rpc.None) (PruneResult, error) {
		n, err := g.Prune(ctx)
		return PruneResult{Deleted: n}, err
	})
	rpc.Add(t, rpc.Method{Name: "GetGoal", Route: "GET /api/goals/{id}"}, func(ctx context.Context, a IDArgs) (goal.Goal, error) {
		return g.Get(ctx, a.ID)
	})
	rpc.Add(t, rpc.Method{Name: "GoalSteps", Route: "GET /api/goals/{id}/steps"}, func(ctx context.Context, a GoalStepsArgs) (StepsResult, error) {
		if a.Limit <= 0 || a.Limit > maxStepPage {
			a.Limit = maxStepPage
		}
		steps, err := g.Steps(ctx, a.ID, a.After, a.Limit)
		return StepsResult{Steps: steps}, err
	})
	// The REST route of a step's picture stays in package server: it names the path's whole
	// numbers in its own words.
	rpc.Add(t, rpc.Method{Name: "GoalStepImage"}, func(ctx context.Context, a GoalStepImageArgs) (llm.Image, error) {
		return g.StepImage(ctx, a.ID, a.Index, a.N)
	})
	rpc.Add(t, rpc.Method{Name: "GoalEvents", Route: "GET /api/goals/{id}/events"}, func(ctx context.Context, a GoalEventsArgs) (EventsResult, error) {
		evs, err := g.History(ctx, a.ID, a.After)
		return EventsResult{Events: evs}, err
	})
	for _, c := range []struct {
		name, route string
		act         func(context.Context, string) error
	}{
		{"PauseGoal", "POST /api/goals/{id}/pause", g.Pause},
		{"ResumeGoal", "POST /api/goals/{id}/resume", g.Resume},
		{"AbortGoal", "POST /api/goals/{id}/abort", g.Abort},
		{"DeleteGoal", "DELETE /api/goals/{id}", g.Delete},
	} {
		rpc.Do(t, rpc.Method{Name: c.name, Route: c.route}, func(ctx context.Context, a IDArgs) error {
			return goalControl(c.act(ctx, a.ID))
		})
	}
	rpc.Do(t, rpc.Method{Name: "SteerGoal", Route: "POST /api/goals/{id}/steer"}, func(ctx context.Context, a SteerGoalArgs) error {
		return goalControl(g.Steer(ctx, a.ID, a.Text))
	})
	rpc.Do(t, rpc.Method{Name: "ReopenGoal", Route: "POST /api/goals/{id}/reopen"}, func(ctx context.Context, a ReopenGoalArgs) error {
		return goalControl(g.Reopen(ctx, a.ID, a.Feedback))
	})
	rpc.Do(t, rpc.Method{Name: "RaiseGoalBudget", Route: "POST /api/goals/{id}/budget"}, func(ctx context.Context, a RaiseGoalBudgetArgs) error {
		return goalControl(g.RaiseBudget(ctx, a.ID, a.BudgetUSD, a.BudgetTokens))
	})
	rpc.Add(t, rpc.Method{Name: "PendingApprovals", Route: "GET /api/approvals"}, func(ctx context.Context, _ rpc.None) (ApprovalsResult, error) {
		as, err := g.PendingApprovals(ctx)
		return ApprovalsResult{Approvals: as}, err
	})
	rpc.Add(t, rpc.Method{Name: "AnswerApproval", Route: "POST /api/approvals/{id}"}, func(ctx context.Context, a AnswerApprovalArgs) (agent.Approval, error) {
		ap, err := g.AnswerApproval(ctx, a.ID, a.Status, a.Reason)
		return ap, goalControl(err)
	})
	rpc.Add(t, rpc.Method{Name: "Tools", Route: "GET /api/tools"}, func(ctx context.Context, _ rpc.None) (ToolsResult, error) {
		return ToolsResult{Tools: g.Registry().Definitions()}, nil
	})
}

package main

import (
	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/config"
	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/tools"
)

// ListGoals returns every goal, newest activity first.
func (a *App) ListGoals() ([]goal.Goal, error) { return a.eng.Goals.List(a.ctx) }

// StartGoal validates and queues a goal; a refusal names the field.
func (a *App) StartGoal(spec goal.Spec) (goal.Goal, error) { return a.eng.Goals.Start(a.ctx, spec) }

// GetGoal returns one goal.
func (a *App) GetGoal(id string) (goal.Goal, error) { return a.eng.Goals.Get(a.ctx, id) }

// GoalSteps returns up to limit steps after index after.
func (a *App) GoalSteps(id string, after, limit int) ([]goal.Step, error) {
	return a.eng.Goals.Steps(a.ctx, id, after, limit)
}

// GoalStepImage returns picture n (from 0) of a step's result.
func (a *App) GoalStepImage(id string, index, n int) (llm.Image, error) {
	return a.eng.Goals.StepImage(a.ctx, id, index, n)
}

// GoalEvents returns a goal's stored events after seq.
func (a *App) GoalEvents(id string, after int64) ([]goal.Event, error) {
	return a.eng.Goals.History(a.ctx, id, after)
}

// PauseGoal, ResumeGoal, AbortGoal and DeleteGoal control a goal.
func (a *App) PauseGoal(id string) error  { return a.eng.Goals.Pause(a.ctx, id) }
func (a *App) ResumeGoal(id string) error { return a.eng.Goals.Resume(a.ctx, id) }
func (a *App) AbortGoal(id string) error  { return a.eng.Goals.Abort(a.ctx, id) }
func (a *App) DeleteGoal(id string) error { return a.eng.Goals.Delete(a.ctx, id) }

// SteerGoal sends the model a message for its next turn.
func (a *App) SteerGoal(id, text string) error { return a.eng.Goals.Steer(a.ctx, id, text) }

// ReopenGoal continues a finished goal with feedback.
func (a *App) ReopenGoal(id, feedback string) error { return a.eng.Goals.Reopen(a.ctx, id, feedback) }

// RaiseGoalBudget sets a new budget (0 keeps that part) and lets a held goal go on.
func (a *App) RaiseGoalBudget(id string, usd float64, tokens int) error {
	return a.eng.Goals.RaiseBudget(a.ctx, id, usd, tokens)
}

// PruneGoals deletes every finished goal.
func (a *App) PruneGoals() (int, error) { return a.eng.Goals.Prune(a.ctx) }

// PendingApprovals lists the questions waiting for the user.
func (a *App) PendingApprovals() ([]agent.Approval, error) {
	return a.eng.Goals.PendingApprovals(a.ctx)
}

// AnswerApproval answers one: allow_once, allow_goal or deny (with an optional reason).
func (a *App) AnswerApproval(id, status, reason string) (agent.Approval, error) {
	return a.eng.Goals.AnswerApproval(a.ctx, id, agent.ApprovalStatus(status), reason)
}

// Tools lists the tools goals can use, with their risk.
func (a *App) Tools() []tools.Definition { return a.eng.Registry.Definitions() }

// GoalSettings returns the goal runner's settings.
func (a *App) GoalSettings() (config.GoalDefaults, error) {
	return config.LoadGoalDefaults(a.ctx, a.eng.Store)
}

// SetGoalSettings stores them; the concurrency limit applies from the next start.
func (a *App) SetGoalSettings(d config.GoalDefaults) error {
	return config.SaveGoalDefaults(a.ctx, a.eng.Store, d)
}

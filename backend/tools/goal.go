package tools

import (
	"context"
	"strings"
)

// Goal tool names. The runner treats them specially: they end or steer the goal itself and
// are never counted as work steps for the critic.
const (
	ToolClaimComplete   = "claim_complete"
	ToolAbortWithReport = "abort_with_report"
	ToolWriteTodos      = "write_todos"
	ToolCompleteTodo    = "complete_todo"
	ToolDeclareStep     = "declare_step"
	ToolVerifyStep      = "verify_step"
	ToolReadStepOutput  = "read_step_output"
)

// IsGoalTool reports whether name is one of the goal tools.
func IsGoalTool(name string) bool {
	switch name {
	case ToolClaimComplete, ToolAbortWithReport, ToolWriteTodos, ToolCompleteTodo, ToolDeclareStep, ToolVerifyStep, ToolReadStepOutput:
		return true
	}
	return false
}

// GoalControl is the running goal as the goal tools see it. The runner implements it and
// puts it in each call's context with WithGoal.
type GoalControl interface {
	ClaimComplete(rationale string) string
	AbortWithReport(reason, learned string) string
	WriteTodos(items []string, active int) (string, error)
	CompleteTodo(index int, note string) (string, error)
	DeclareStep(number int, title, action, successCriteria string) (string, error)
	VerifyStep(number int, passed bool, observation, nextAction string) (string, error)
	// ReadStepOutput returns up to limit characters of a step's full output from offset: the
	// step log keeps what the conversation shows only as a stub or a cut.
	ReadStepOutput(step, offset, limit int) (string, error)
}

type goalKey struct{}

// WithGoal returns ctx carrying the running goal for the goal tools.
func WithGoal(ctx context.Context, g GoalControl) context.Context {
	return context.WithValue(ctx, goalKey{}, g)
}

// GoalFrom returns the running goal a tool call comes from, for tools beyond the goal tools
// that end it through its own controls (the fleet's complete_task and fail_task).
func GoalFrom(ctx context.Context) (GoalControl, bool) { return goalFrom(ctx) }

func goalFrom(ctx context.Context) (GoalControl, bool) {
	g, ok := ctx.Value(goalKey{}).(GoalControl)
	return g, ok
}

func outsideGoal(tool string) Result {
	return Errorf("%s only works inside a running goal; there is none here, so nothing happened.", tool)
}

type claimParams struct {
	Rationale string `json:"rationale" desc:"Why you believe the goal is achieved, with the evidence (commands run, outputs seen). It will be verified."`
}

type abortParams struct {
	Reason         string `json:"reason" desc:"Why you cannot make further progress."`
	WhatWasLearned string `json:"what_was_learned" desc:"What you found out that the user should know: what you tried, what failed, what might work."`
}

type todosParams struct {
	Items       []string `json:"items" desc:"The checklist, in order; replaces any earlier one."`
	ActiveIndex int      `json:"active_index,omitempty" desc:"0-based index of the item you are working on now." default:"0"`
}

type completeTodoParams struct {
	Index int    `json:"index" desc:"0-based index of the finished item."`
	Note  string `json:"note,omitempty" desc:"What was done, briefly."`
}

type declareStepParams struct {
	StepNumber      int    `json:"step_number" desc:"1, 2, 3, … in order."`
	Title           string `json:"title" desc:"A few words naming the step."`
	Action          string `json:"action" desc:"What you are about to do."`
	SuccessCriteria string `json:"success_criteria" desc:"How you will know it worked."`
}

type verifyStepParams struct {
	StepNumber  int    `json:"step_number"`
	Passed      bool   `json:"passed" desc:"Whether the success criteria of the step held."`
	Observation string `json:"observation" desc:"What you actually saw."`
	NextAction  string `json:"next_action" desc:"What you will do next."`
}

type readStepParams struct {
	Step   int `json:"step" desc:"The step number, as the stub or the cut note names it."`
	Offset int `json:"offset,omitempty" desc:"Character offset to start reading at (0: the start)." default:"0"`
	Limit  int `json:"limit,omitempty" desc:"Most characters to return (default and most 8000)." default:"8000"`
}

// GoalTools returns the goal tools. All are read_only: they change only the goal's own
// bookkeeping, never the machine.
func GoalTools() []Tool {
	return []Tool{
		goalTool(ToolClaimComplete,
			"Call when you believe the goal is achieved. The success criterion is then verified; if verification fails you are told why and must keep working.",
			func(g GoalControl, p claimParams) (Result, error) {
				if strings.TrimSpace(p.Rationale) == "" {
					return Errorf("claim_complete needs a rationale: say why the goal is achieved and what evidence shows it."), nil
				}
				return Result{Text: g.ClaimComplete(p.Rationale)}, nil
			}),
		goalTool(ToolAbortWithReport,
			"Call only if you truly cannot make further progress. Give the reason and what you learned; the goal ends as aborted with your report.",
			func(g GoalControl, p abortParams) (Result, error) {
				if strings.TrimSpace(p.Reason) == "" {
					return Errorf("abort_with_report needs a reason."), nil
				}
				return Result{Text: g.AbortWithReport(p.Reason, p.WhatWasLearned)}, nil
			}),
		goalTool(ToolWriteTodos,
			"Write (or replace) your checklist for a multi-phase goal. It is shown to you every turn.",
			func(g GoalControl, p todosParams) (Result, error) {
				return textOrError(g.WriteTodos(p.Items, p.ActiveIndex))
			}),
		goalTool(ToolCompleteTodo, "Mark a checklist item done.",
			func(g GoalControl, p completeTodoParams) (Result, error) {
				return textOrError(g.CompleteTodo(p.Index, p.Note))
			}),
		goalTool(ToolDeclareStep,
			"Before a non-trivial action, declare the step: what you will do and how you will know it worked. Then act, then call verify_step.",
			func(g GoalControl, p declareStepParams) (Result, error) {
				return textOrError(g.DeclareStep(p.StepNumber, p.Title, p.Action, p.SuccessCriteria))
			}),
		goalTool(ToolVerifyStep, "After acting on a declared step, record whether it worked and what comes next.",
			func(g GoalControl, p verifyStepParams) (Result, error) {
				return textOrError(g.VerifyStep(p.StepNumber, p.Passed, p.Observation, p.NextAction))
			}),
		goalTool(ToolReadStepOutput,
			"Read the full output of an earlier step from the step log: long outputs are cut, and old ones are replaced by a stub naming their step, to keep your context small.",
			func(g GoalControl, p readStepParams) (Result, error) {
				return textOrError(g.ReadStepOutput(p.Step, p.Offset, p.Limit))
			}),
	}
}

// goalTool is a goal tool: read_only, and run on the goal the call comes from; outside a
// running goal it says so and does nothing.
func goalTool[P any](name, desc string, run func(g GoalControl, p P) (Result, error)) Tool {
	return New(name, desc, ReadOnly, func(ctx context.Context, c Call, p P) (Result, error) {
		g, ok := goalFrom(ctx)
		if !ok {
			return outsideGoal(name), nil
		}
		return run(g, p)
	})
}

// textOrError turns a control's answer into a result: its error is the model's mistake.
func textOrError(text string, err error) (Result, error) {
	if err != nil {
		return Errorf("%v", err), nil
	}
	return Result{Text: text}, nil
}

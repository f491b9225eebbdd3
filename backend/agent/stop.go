package agent

import (
	"fmt"
	"time"
)

// Progress is where a loop stands, as its stop conditions read it.
type Progress struct {
	Elapsed time.Duration // active wall-clock time used
	Steps   int           // tool calls made
	// ToolTurns is how many automatic tool turns ran since the model last got a user-role
	// message; FailingBatches how many tool batches in a row failed entirely.
	ToolTurns      int
	FailingBatches int
	// CriticRounds is how many reviews a critic made in this round of work.
	CriticRounds int
}

// Stop says which rule ended a loop and why, in words for the person.
type Stop struct {
	Rule string // wall_clock | step_cap | turn_cap | tool_failures | iteration_cap
	Why  string
}

// StopCondition is one rule a loop may stop by. Each is a pure function of the progress.
type StopCondition func(Progress) (Stop, bool)

// FirstStop returns the first condition that holds, in the order given.
func FirstStop(p Progress, conds ...StopCondition) (Stop, bool) {
	for _, c := range conds {
		if s, ok := c(p); ok {
			return s, true
		}
	}
	return Stop{}, false
}

// WallClockRunsOut stops once d of active time is used (d ≤ 0: never).
func WallClockRunsOut(d time.Duration) StopCondition {
	return func(p Progress) (Stop, bool) {
		return Stop{"wall_clock", fmt.Sprintf("the wall clock of %s ran out", d)}, d > 0 && p.Elapsed >= d
	}
}

// StepCapReached stops once n tool calls were made (n ≤ 0: never).
func StepCapReached(n int) StopCondition {
	return func(p Progress) (Stop, bool) {
		return Stop{"step_cap", fmt.Sprintf("the step cap of %d steps was reached", n)}, n > 0 && p.Steps >= n
	}
}

// ToolTurnCapReached stops once n automatic tool turns ran for one message (n ≤ 0: never).
func ToolTurnCapReached(n int) StopCondition {
	return func(p Progress) (Stop, bool) {
		return Stop{"turn_cap", fmt.Sprintf("%d automatic tool turns ran for one message", p.ToolTurns)}, n > 0 && p.ToolTurns >= n
	}
}

// ToolBatchesKeepFailing stops once n tool batches in a row failed entirely (n ≤ 0: never):
// the model is flailing.
func ToolBatchesKeepFailing(n int) StopCondition {
	return func(p Progress) (Stop, bool) {
		return Stop{"tool_failures", fmt.Sprintf("%d tool batches in a row failed", p.FailingBatches)}, n > 0 && p.FailingBatches >= n
	}
}

// CriticRoundsReached stops once a critic reviewed n times without approving (n ≤ 0: never).
func CriticRoundsReached(n int) StopCondition {
	return func(p Progress) (Stop, bool) {
		return Stop{"iteration_cap", fmt.Sprintf("the critic reviewed %d times without approving", p.CriticRounds)}, n > 0 && p.CriticRounds >= n
	}
}

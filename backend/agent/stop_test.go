package agent

import (
	"testing"
	"time"
)

func TestFirstStop(t *testing.T) {
	t.Parallel()
	goal := []StopCondition{WallClockRunsOut(time.Hour), StepCapReached(300)}
	chat := []StopCondition{ToolBatchesKeepFailing(3), ToolTurnCapReached(20)}
	cases := []struct {
		name  string
		conds []StopCondition
		p     Progress
		rule  string // "" = goes on
		why   string
	}{
		{"goal: fresh", goal, Progress{}, "", ""},
		{"goal: a second left", goal, Progress{Elapsed: time.Hour - time.Second, Steps: 299}, "", ""},
		{"goal: clock out", goal, Progress{Elapsed: time.Hour}, "wall_clock", "the wall clock of 1h0m0s ran out"},
		{"goal: step cap", goal, Progress{Steps: 300}, "step_cap", "the step cap of 300 steps was reached"},
		{"goal: both, the clock is named first", goal, Progress{Elapsed: 2 * time.Hour, Steps: 400}, "wall_clock", "the wall clock of 1h0m0s ran out"},
		{"chat: two failures", chat, Progress{FailingBatches: 2, ToolTurns: 19}, "", ""},
		{"chat: three failures", chat, Progress{FailingBatches: 3}, "tool_failures", "3 tool batches in a row failed"},
		{"chat: turn cap", chat, Progress{ToolTurns: 20}, "turn_cap", "20 automatic tool turns ran for one message"},
		{"chat: failures win over the turn cap", chat, Progress{FailingBatches: 3, ToolTurns: 20}, "tool_failures", "3 tool batches in a row failed"},
		{"critic rounds", []StopCondition{CriticRoundsReached(2)}, Progress{CriticRounds: 2}, "iteration_cap", "the critic reviewed 2 times without approving"},
		{"zero caps never stop", []StopCondition{WallClockRunsOut(0), StepCapReached(0), ToolTurnCapReached(0), ToolBatchesKeepFailing(0), CriticRoundsReached(0)},
			Progress{Elapsed: 1000 * time.Hour, Steps: 1e6, ToolTurns: 1e6, FailingBatches: 1e6, CriticRounds: 1e6}, "", ""},
		{"no conditions", nil, Progress{Steps: 1e6}, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, ok := FirstStop(c.p, c.conds...)
			if ok != (c.rule != "") || s.Rule != c.rule || (ok && s.Why != c.why) {
				t.Fatalf("FirstStop(%+v) = %+v, %v; want rule %q, why %q", c.p, s, ok, c.rule, c.why)
			}
		})
	}
}

package store

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/goal"
)

func TestGoalStepsKeepFirstFiftyAndLastFourHundredFifty(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t)
	ctx := context.Background()
	g := goal.Goal{ID: "goal-1", Status: goal.StatusRunning, CreatedAt: time.Now(), UpdatedAt: time.Now()}
	if err := s.CommitGoal(ctx, &goal.Commit{Goal: &g}); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 700; i++ {
		st := goal.Step{Index: i, CallID: "c", Tool: "t", Args: json.RawMessage(`{}`), StartedAt: time.Now()}
		if err := s.CommitGoal(ctx, &goal.Commit{ID: g.ID, Steps: []goal.Step{st}}); err != nil {
			t.Fatal(err)
		}
	}
	steps, err := s.GoalSteps(ctx, g.ID, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 500 || steps[0].Index != 1 || steps[49].Index != 50 || steps[50].Index != 251 || steps[499].Index != 700 {
		t.Fatalf("%d steps kept: first %d, 50th %d, 51st %d, last %d", len(steps), steps[0].Index, steps[49].Index, steps[50].Index, steps[len(steps)-1].Index)
	}
}

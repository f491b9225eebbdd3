package agent_test

import (
	"context"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/store"
)

// seedGoal stores a goal for approvals to belong to (they reference it).
func seedGoal(t *testing.T, st *store.Store) string {
	t.Helper()
	now := time.Now().UTC()
	g := goal.Goal{ID: "goal-test", Spec: goal.Spec{PaneID: "term-1", Goal: "test"}, Status: goal.StatusRunning, CreatedAt: now, UpdatedAt: now}
	if err := st.CommitGoal(context.Background(), &goal.Commit{Goal: &g}); err != nil {
		t.Fatal(err)
	}
	return g.ID
}

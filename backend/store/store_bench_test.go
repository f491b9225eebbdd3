package store

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/workspace"
)

// BenchmarkSaveWorkspace measures one durable save of a 3x3 workspace (the row and its nine
// panes in one transaction): the cost of every grid, swap or weight change.
func BenchmarkSaveWorkspace(b *testing.B) {
	s, _ := openTemp(b)
	ws := gridWorkspace("ws-bench", 0, 3)
	ctx := context.Background()
	b.ResetTimer()
	for range b.N {
		if err := s.SaveWorkspace(ctx, ws); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkListWorkspaces measures reading ten 2x2 workspaces, what every client does on load.
func BenchmarkListWorkspaces(b *testing.B) {
	s, _ := openTemp(b)
	ctx := context.Background()
	for w := range 10 {
		if err := s.SaveWorkspace(ctx, gridWorkspace(fmt.Sprintf("ws-%d", w), w, 2)); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for range b.N {
		if _, err := s.ListWorkspaces(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCommitGoalStep measures one step's commit of a running goal (goal row, message,
// step, event), the store's share of the Goal Runner's overhead per step.
func BenchmarkCommitGoalStep(b *testing.B) {
	s, _ := openTemp(b)
	ctx := context.Background()
	g := runningGoal("goal-bench")
	b.ResetTimer()
	for i := range b.N {
		if err := s.CommitGoal(ctx, stepCommit(g, i+1)); err != nil {
			b.Fatal(err)
		}
	}
}

// gridWorkspace is a workspace of n by n terminal panes, at tab position pos.
func gridWorkspace(id string, pos, n int) workspace.Workspace {
	weights := make([]float64, n)
	for i := range weights {
		weights[i] = 1
	}
	ws := workspace.Workspace{ID: id, Name: id, Position: pos, Rows: n, Cols: n,
		RowWeights: weights, ColWeights: weights, CreatedAt: time.Now(), UpdatedAt: time.Now()}
	for i := range n * n {
		ws.Panes = append(ws.Panes, workspace.Pane{ID: fmt.Sprintf("%s-p%d", id, i), Kind: workspace.KindTerminal, Label: "t", Row: i / n, Col: i % n})
	}
	return ws
}

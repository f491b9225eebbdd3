package store

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/workspace"
)

// BenchmarkSaveWorkspace measures one durable save of a 3x3 workspace (the row and its nine
// panes in one transaction): the cost of every grid, swap or weight change.
func BenchmarkSaveWorkspace(b *testing.B) {
	s, err := Open(context.Background(), filepath.Join(b.TempDir(), FileName))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ws := workspace.Workspace{ID: "ws-bench", Name: "bench", Rows: 3, Cols: 3,
		RowWeights: []float64{1, 1, 1}, ColWeights: []float64{1, 1, 1}, CreatedAt: time.Now(), UpdatedAt: time.Now()}
	for i := range 9 {
		ws.Panes = append(ws.Panes, workspace.Pane{ID: fmt.Sprintf("p%d", i), Kind: workspace.KindTerminal, Label: "t", Row: i / 3, Col: i % 3})
	}
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
	s, err := Open(context.Background(), filepath.Join(b.TempDir(), FileName))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	for w := range 10 {
		ws := workspace.Workspace{ID: fmt.Sprintf("ws-%d", w), Name: "w", Position: w, Rows: 2, Cols: 2,
			RowWeights: []float64{1, 1}, ColWeights: []float64{1, 1}, CreatedAt: time.Now(), UpdatedAt: time.Now()}
		for i := range 4 {
			ws.Panes = append(ws.Panes, workspace.Pane{ID: fmt.Sprintf("p%d-%d", w, i), Kind: workspace.KindTerminal, Label: "t", Row: i / 2, Col: i % 2})
		}
		if err := s.SaveWorkspace(ctx, ws); err != nil {
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
	s, err := Open(context.Background(), filepath.Join(b.TempDir(), FileName))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	g := goal.Goal{ID: "goal-bench", Status: goal.StatusRunning, CreatedAt: time.Now(), UpdatedAt: time.Now()}
	b.ResetTimer()
	for i := range b.N {
		if err := s.CommitGoal(ctx, stepCommit(g, i+1)); err != nil {
			b.Fatal(err)
		}
	}
}

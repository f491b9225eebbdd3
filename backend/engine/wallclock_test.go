package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/goal/criterion"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
	"github.com/clusterspace/clusterspace/backend/tools"
)

// A goal's wall clock reaches an MCP call that never answers: the call is cancelled (the
// server is told, as Ctrl+C would) and the goal ends with its final report soon after its
// time is up, not when the MCP call's own timeout of a minute runs out.
func TestWallClockCutsOffALongMCPCall(t *testing.T) {
	r := newBoundaryRig(t, WithConfigDir(extensionConfig(t, fmt.Sprintf("wallclock-%d", time.Now().UnixNano()), "http://127.0.0.1:1/")))
	r.srv.Push(llmtest.Calls(llmtest.Call("mcp__t__hang", map[string]any{})), llmtest.Text("I was waiting on the MCP server."))
	zero := 0
	spec := goal.Spec{PaneID: r.ws.Panes[1].ID, Goal: "wait on the server", Criterion: criterion.Spec{Kind: "manual"},
		Settings: goal.Settings{CriticInterval: &zero, WorkDir: t.TempDir(), WallClock: goal.Duration(2 * time.Second)}}
	spec.Policy.Ceiling = tools.SpendsMoney
	start := time.Now()
	g, err := r.eng.Goals.Start(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if g, err = r.eng.Goals.Wait(ctx, g.ID); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	if g.Status != goal.StatusFailed || !strings.Contains(g.Report, "wall clock") || took > 15*time.Second {
		t.Fatalf("goal %s after %s: %s", g.Status, took, g.Report)
	}
	steps, _ := r.eng.Goals.Steps(context.Background(), g.ID, 0, 5)
	if len(steps) == 0 || steps[0].Tool != "mcp__t__hang" || !strings.Contains(steps[0].Result, "wall clock") {
		t.Fatalf("the MCP call's step: %+v", steps)
	}
}

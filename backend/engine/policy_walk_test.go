package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/goal/criterion"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
	"github.com/clusterspace/clusterspace/backend/tools"
)

// TestEveryRegisteredToolGoesThroughThePolicy walks the engine's real tool registry. For
// each tool, a goal whose deny list holds just that tool has the model call it: the call must
// be refused by the policy (so it never ran), whatever the tool is.
func TestEveryRegisteredToolGoesThroughThePolicy(t *testing.T) {
	srv := llmtest.New(t, llmtest.Script{})
	cfg := srv.Config()
	eng := openEngine(t, t.TempDir(),
		WithPaneExists(func(string) bool { return true }),
		WithModel(cfg))
	defer eng.Close()
	names := eng.Registry.Names()
	if len(names) < 10 {
		t.Fatalf("only %d tools registered: %v", len(names), names)
	}
	zero := 0
	for _, name := range names {
		end := llmtest.Calls(llmtest.Call(tools.ToolAbortWithReport, map[string]string{"reason": "done testing", "what_was_learned": "the policy refused it"}))
		if name == tools.ToolAbortWithReport {
			end = llmtest.Calls(llmtest.Call(tools.ToolClaimComplete, map[string]string{"rationale": "done testing"}))
		}
		srv.Push(llmtest.Calls(llmtest.Call(name, map[string]any{})), end)
		spec := goal.Spec{PaneID: "term-1", Goal: "call " + name, Criterion: criterion.Spec{Kind: "manual"},
			Settings: goal.Settings{CriticInterval: &zero, WorkDir: t.TempDir()}}
		spec.Policy.Ceiling = tools.SpendsMoney // the deny list alone must stop it
		spec.Policy.Denied = []string{name}
		g, err := eng.Goals.Start(context.Background(), spec)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		g, err = eng.Goals.Wait(ctx, g.ID)
		cancel()
		if err != nil || !g.Status.Finished() {
			t.Fatalf("%s: goal did not end: %v %s", name, err, g.Status)
		}
		steps, _ := eng.Goals.Steps(context.Background(), g.ID, 0, 5)
		if len(steps) == 0 || steps[0].Tool != name || !strings.Contains(steps[0].Result, "Refused by the goal's policy: "+name+" is on this goal's deny list") {
			t.Errorf("%s was not refused by the policy: %+v", name, steps)
		}
	}
	t.Logf("walked %d tools: %s", len(names), strings.Join(names, ", "))
}

package fleet_test

import (
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/fleet"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

// A fleet task's goal is offered the fleet tools from its first request (tools offered by
// need: a goal outside any fleet finds them with find_tools instead).
func TestFleetTaskIsOfferedTheFleetTools(t *testing.T) {
	r := newRig(t, func(pane string, turn int, req llmtest.Request) llmtest.Reply { return claim("done") })
	f := r.run("name: tools\ntasks:\n  - {id: one, goal: Do it, pane: one-term, check_shell: \"true\"}\n")
	if f.Status != fleet.StatusCompleted {
		t.Fatalf("fleet %s: %+v", f.Status, f.Tasks)
	}
	first := string(r.requests("one-term")[0].Body)
	for _, name := range []string{`"get_fleet_status"`, `"complete_task"`, `"share_context"`} {
		if !strings.Contains(first, name) {
			t.Errorf("the task's first request does not offer %s", name)
		}
	}
}

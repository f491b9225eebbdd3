package cli

import (
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/agent"
)

// The person's answer on the terminal decides the call: y allows it once, g the tool for the
// rest of the goal where the goal may be allowed (mcp asks no such question), anything else
// denies it with what follows "n" as the reason.
func TestAskOnTerminalReadsTheAnswer(t *testing.T) {
	call := agent.Approval{Tool: "write_to_terminal", Risk: "write_local", Reason: "above the ceiling", Args: []byte(`{"text":"rm x"}`)}
	for _, c := range []struct {
		answer     string
		goalScope  bool
		want       agent.ApprovalStatus
		wantReason string
	}{
		{"y\n", true, agent.ApprovalAllowOnce, ""},
		{" yes \n", false, agent.ApprovalAllowOnce, ""},
		{"g\n", true, agent.ApprovalAllowScope, ""},
		{"goal\n", false, agent.ApprovalDeny, "goal"},
		{"n not in my repo\n", true, agent.ApprovalDeny, "not in my repo"},
		{"no\n", true, agent.ApprovalDeny, ""},
		{"", true, agent.ApprovalDeny, ""}, // the terminal closed: no answer is no
	} {
		var out strings.Builder
		ask := askOnTerminal(strings.NewReader(c.answer), &out, "APPROVAL NEEDED", "Allow?", c.goalScope)
		status, reason, answered := ask(call)
		if status != c.want || reason != c.wantReason || !answered {
			t.Errorf("answer %q (goal scope %v): got %s %q %v, want %s %q true", c.answer, c.goalScope, status, reason, answered, c.want, c.wantReason)
		}
		if q := out.String(); !strings.Contains(q, "APPROVAL NEEDED  write_to_terminal (write_local)") || !strings.Contains(q, "why: above the ceiling") ||
			!strings.Contains(q, `args: {"text":"rm x"}`) || !strings.HasSuffix(q, "Allow? (optionally: n <reason>): ") {
			t.Errorf("answer %q: the question does not name the call and the choices:\n%s", c.answer, q)
		}
	}
}

package main

import (
	"testing"

	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

// A sandboxed goal's confined shell has a writable temp dir and caches: mktemp and Go's build
// cache work there (they failed with "Permission denied" on HOME and /tmp), and the goal's
// story says where they go.
func TestGoalCLIConfinedShellHasScratchDirs(t *testing.T) {
	cmd := `t=$(mktemp) && echo tmp-ok > "$t" && c=$(go env GOCACHE) && mkdir -p "$c" && touch "$c/probe" && cat "$t" > done.txt`
	code, out, errs := runGoalCLI(t, llmtest.Script{Replies: []llmtest.Reply{
		toolCall("write_to_terminal", map[string]any{"pane_id": "term-1", "text": cmd, "wait_timeout_ms": 20000}),
		// `go env` may be quiet for longer than write_to_terminal's "output stable" wait: wait
		// for the prompt before claiming, as a careful agent would.
		toolCall("wait_for_output", map[string]any{"pane_id": "term-1", "timeout_ms": 20000}),
		toolCall("claim_complete", map[string]string{"rationale": "done.txt written"}),
	}}, "--goal", "Write done.txt through a temp file", "--check-shell", "grep -q tmp-ok done.txt")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	wantOutput(t, out, "confined by the kernel", "private scratch dir", "TMPDIR, XDG_CACHE_HOME, GOCACHE", "verify    passed")
}

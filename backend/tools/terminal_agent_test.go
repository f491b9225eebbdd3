package tools_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/terminal"
)

// The terminal tools on a pane showing the real Claude Code's screen, replayed from its
// recording (backend/terminal/testdata/agents): the answer Claude Code drew and then
// overwrote parts of around it is read as the screen shows it, a pattern on it matches, and
// poll_terminal_status says Claude Code finished its turn.
func TestTerminalToolsReadARecordedClaudeCodeScreen(t *testing.T) {
	var rec struct {
		Cols, Rows  int
		Answer      string
		Checkpoints []struct {
			Offset int64
			State  string
		}
	}
	b, err := os.ReadFile("../terminal/testdata/agents/claude.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("../terminal/testdata/agents/claude.raw")
	if err != nil {
		t.Fatal(err)
	}
	var end int64
	for _, cp := range rec.Checkpoints {
		if cp.State == string(terminal.AgentFinished) {
			end = cp.Offset
		}
	}
	dir := t.TempDir()
	feed := filepath.Join(dir, "screen.raw")
	if err := os.WriteFile(feed, raw[:end], 0o600); err != nil {
		t.Fatal(err)
	}
	r, m := terminalRegistry(t, terminal.Options{})
	const pane = "pane-c1a0de0000f1"
	if _, err := m.Open(context.Background(), terminal.Spec{PaneID: pane, Dir: dir, Cols: rec.Cols, Rows: rec.Rows, Agent: "claude",
		Command: []string{"sh", "-c", "stty -echo -opost; cat " + feed + "; exec sleep 60"}}); err != nil {
		t.Fatal(err)
	}
	// The replay is done when its output has rested.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		st, err := m.Status(pane, "")
		if err != nil {
			t.Fatal(err)
		}
		if st.Cursor >= end && time.Since(st.LastOutput) > time.Second {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the replay did not finish: %d of %d bytes", st.Cursor, end)
		}
	}
	mustContain(t, call(t, r, "read_terminal_output", map[string]any{"pane_id": pane, "lines": 20}), rec.Answer, "● Write(answer.txt)")
	mustContain(t, call(t, r, "wait_for_output", map[string]any{"pane_id": pane, "until_pattern": `CC-FINISHED: the file is \w+\.`, "timeout_ms": 5000}),
		`Completion: pattern (matched "CC-FINISHED: the file is written.")`)
	mustContain(t, call(t, r, "poll_terminal_status", map[string]any{"pane_id": pane}),
		"State: claude finished its turn and waits at its prompt", "Agent: claude finished")
	mustContain(t, call(t, r, "wait_for_output", map[string]any{"pane_id": pane, "timeout_ms": 10000}), "Completion: prompt")
}

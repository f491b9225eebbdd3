package terminal_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
	"github.com/clusterspace/clusterspace/backend/terminal"
)

// agentCLI is the path of a pinned agent CLI, installed by scripts/agents.sh (once; then it
// only checks); a version npm does not serve fails the test with the script's words.
func agentCLI(t *testing.T, bin string) string {
	t.Helper()
	out, err := exec.Command("../../scripts/agents.sh").CombinedOutput()
	if err != nil {
		t.Fatalf("scripts/agents.sh could not install the pinned agent CLIs: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	matches, _ := filepath.Glob(filepath.Join(lines[len(lines)-1], "*", "node_modules", ".bin", bin))
	if len(matches) != 1 {
		t.Fatalf("scripts/agents.sh left %d %s executables (%v), want 1", len(matches), bin, matches)
	}
	return matches[0]
}

func writeJSONFile(t *testing.T, path string, v any) {
	t.Helper()
	b, _ := json.Marshal(v)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// The real Claude Code in a tab: a wait without a pattern after typing a task ends when it is
// idle again with its answer on the screen, long before the timeout; the screen, which it
// draws by moving the cursor, reads as the person sees it; its states read as they are.
func TestLiveClaudeWaitEndsWhenIdle(t *testing.T) {
	t.Parallel()
	bin := agentCLI(t, "claude")
	scratch := t.TempDir()
	work, cfg := filepath.Join(scratch, "work"), filepath.Join(scratch, "config")
	os.MkdirAll(work, 0o700)
	os.MkdirAll(cfg, 0o700)
	const answer = "CC-FINISHED: the file is written."
	srv := llmtest.New(t, llmtest.Script{
		Models: []string{"scripted-main", "scripted-small"},
		Roles:  []llmtest.Role{{Name: "small", Match: llmtest.Match{Model: "scripted-small"}, Reply: llmtest.Reply{Text: "Live"}}},
		Replies: []llmtest.Reply{
			{Text: "Working on it.", Chunks: 6, ChunkDelayMs: 300},
			{Text: answer, Chunks: 6, ChunkDelayMs: 300},
		},
	})
	// The first reply ends the turn without a tool call; the second is the next turn's.
	writeJSONFile(t, filepath.Join(cfg, ".claude.json"), map[string]any{"hasCompletedOnboarding": true,
		"projects": map[string]any{work: map[string]any{"hasTrustDialogAccepted": true, "hasCompletedProjectOnboarding": true}}})
	writeJSONFile(t, filepath.Join(cfg, "settings.json"), map[string]any{
		"apiKeyHelper": "echo sk-scripted-live", "model": "scripted-main",
		"env": map[string]string{"ANTHROPIC_BASE_URL": srv.URL, "ANTHROPIC_DEFAULT_HAIKU_MODEL": "scripted-small",
			"ANTHROPIC_SMALL_FAST_MODEL": "scripted-small", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1"},
	})
	m := newManager(t, terminal.Options{})
	const pane = "pane-c1a0de000001"
	if _, err := m.Open(context.Background(), terminal.Spec{PaneID: pane, Command: []string{bin}, Dir: work, Cols: 100, Rows: 30,
		Env: []string{"HOME=" + scratch, "CLAUDE_CONFIG_DIR=" + cfg}}); err != nil {
		t.Fatal(err)
	}
	state := func() terminal.AgentState {
		s, err := m.AgentState(pane)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	deadline := time.Now().Add(30 * time.Second)
	for state() != terminal.AgentIdle {
		if time.Now().After(deadline) {
			text, _ := m.Tail(pane, "", 30)
			t.Fatalf("Claude Code is not idle at its prompt 30 s after starting (%q):\n%s", state(), text)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for turn, want := range []string{"Working on it.", answer} {
		m.Write(pane, "", []byte("Answer please."))
		time.Sleep(300 * time.Millisecond) // typed and Enter apart, as a person does
		st, _ := m.Status(pane, "")
		m.Write(pane, "", []byte("\r"))
		start := time.Now()
		c, err := m.WaitForCompletion(context.Background(), pane, "", terminal.WaitOptions{Since: st.Cursor, Input: "\r",
			Prompt: true, Timeout: 60 * time.Second})
		took := time.Since(start)
		text, _ := m.Tail(pane, "", 30)
		if err != nil || c.Reason != terminal.CompletedPrompt || took > 30*time.Second {
			t.Fatalf("turn %d: the wait ended with %+v, %v after %v:\n%s", turn, c, err, took, text)
		}
		if !strings.Contains(text, want) {
			t.Fatalf("turn %d: the wait ended after %v before the answer %q was drawn:\n%s", turn, took, want, text)
		}
		t.Logf("turn %d: the wait ended after %v", turn, took)
		if s := state(); !s.Waiting() {
			t.Errorf("turn %d: state %q after the wait, want it waiting for the person", turn, s)
		}
	}
	if len(srv.ChatRequests()) == 0 {
		t.Fatal("Claude Code sent no request to the scripted server")
	}
}

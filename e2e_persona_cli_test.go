package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/cli"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

// `goal run --persona ID` works as a persona of the config dir (here one that overrides the
// built-in reviewer): its prompt, temperature and max_tokens reach the model; an unknown
// persona or skill exits 64 naming it, before any model is asked.
func TestGoalCLIPersona(t *testing.T) {
	configDir := t.TempDir()
	os.MkdirAll(filepath.Join(configDir, "personas"), 0o755)
	os.WriteFile(filepath.Join(configDir, "personas", "reviewer.md"), []byte("---\nname: House reviewer\ntemperature: 0.15\nmax_tokens: 2048\n---\nHOUSE-REVIEWER: read the diff first.\n"), 0o644)

	srv := llmtest.New(t, llmtest.Script{Replies: []llmtest.Reply{
		toolCall("claim_complete", map[string]string{"rationale": "reviewed"}),
	}})
	code, out, errs := runGoalCLIOn(t, srv, "--goal", "Review nothing", "--check-shell", "true",
		"--persona", "reviewer", "--skill", "bug-reproduction", "--config-dir", configDir)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	reqs := srv.ChatRequests()
	if len(reqs) == 0 {
		t.Fatal("no model request")
	}
	req := reqs[0]
	if !strings.Contains(req.System, "HOUSE-REVIEWER") || !strings.Contains(req.System, "Reproducing a bug") {
		t.Errorf("system prompt lacks the persona's file or the skill:\n%s", req.System)
	}
	if req.JSON["temperature"] != 0.15 || req.JSON["max_tokens"] != float64(2048) {
		t.Errorf("temperature %v, max_tokens %v: want the persona's 0.15 and 2048", req.JSON["temperature"], req.JSON["max_tokens"])
	}

	for flag, args := range map[string][]string{
		"persona": {"--persona", "nobody"},
		"skill":   {"--skill", "nobody"},
	} {
		srv := llmtest.New(t, llmtest.Script{})
		code, _, errs := runGoalCLIOn(t, srv, append([]string{"--goal", "x", "--check-manual", "--config-dir", configDir}, args...)...)
		if code != cli.ExitUsage || !strings.Contains(errs, flag) || !strings.Contains(errs, `"nobody"`) {
			t.Errorf("--%s nobody: exit %d, stderr %q (want 64 naming the %s and the id)", flag, code, errs, flag)
		}
		if n := len(srv.ChatRequests()); n != 0 {
			t.Errorf("--%s nobody: %d model requests, want none", flag, n)
		}
	}
}

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
	if !strings.Contains(out, "persona: reviewer") {
		t.Errorf("the run's output does not say which persona works:\n%s", out)
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

// A fleet task's `persona:` shapes that task's agent only; an unknown one is refused with 64,
// naming the task and the field, before anything runs.
func TestFleetCLIPersonaPerTask(t *testing.T) {
	m := newFleetModel(t, func(string, int) llmtest.Reply { return fleetClaim("done") })
	configDir := t.TempDir()
	yaml := "name: p\ntasks:\n  - {id: plain, goal: Say hi, check_shell: \"true\"}\n  - {id: rev, goal: Review it, persona: reviewer, check_shell: \"true\"}\n"
	code, out, errs := runToEnd(t, fleetCmd(t, m, yaml, t.TempDir(), t.TempDir(), "--config-dir", configDir))
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	rev, plain := m.requests("rev-term"), m.requests("plain-term")
	if len(rev) == 0 || len(plain) == 0 {
		t.Fatalf("requests: rev %d, plain %d", len(rev), len(plain))
	}
	if !strings.Contains(rev[0].System, "## Persona: Reviewer") || rev[0].JSON["temperature"] != 0.1 {
		t.Errorf("the reviewer task's request lacks its persona: temperature %v", rev[0].JSON["temperature"])
	}
	if strings.Contains(plain[0].System, "## Persona:") || plain[0].JSON["temperature"] != nil {
		t.Errorf("the plain task got a persona: temperature %v", plain[0].JSON["temperature"])
	}

	before := len(m.order())
	bad := "name: p\ntasks:\n  - {id: a, goal: A, persona: nobody}\n"
	code, _, errs = runToEnd(t, fleetCmd(t, m, bad, t.TempDir(), t.TempDir(), "--config-dir", configDir))
	if code != cli.ExitUsage || !strings.Contains(errs, `task "a"`) || !strings.Contains(errs, `persona`) || !strings.Contains(errs, `"nobody"`) {
		t.Errorf("unknown persona: exit %d, stderr %q", code, errs)
	}
	if len(m.order()) != before {
		t.Error("a refused fleet reached the model")
	}
}

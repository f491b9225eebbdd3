package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/cli"
)

// A goal run with --worktree lands like a fleet task: a repository check that fails on the
// result refuses it (left with the person, as asked) and moves nothing; once the check
// passes it lands, its worktree and branch go, and landing again says it already has.
func TestLandCLILandsAGoalRunInItsOwnWorktree(t *testing.T) {
	repo, dataDir := landRepo(t), t.TempDir()
	before := checkoutDigest(t, repo)
	out := runGoalInWorktree(t, repo, dataDir, "echo made > made.txt", "grep -qx made made.txt")
	m := regexp.MustCompile(`Branch: goal/(goal-[0-9a-f]+) \(worktree (\S+)\)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("the report names no branch:\n%s", out)
	}
	id, dir := m[1], m[2]
	mainBefore := gitRun(t, repo, "rev-parse", "main")

	land := func(wantCode int, args ...string) landReport {
		t.Helper()
		code, out, errs := runToEnd(t, exec.Command(testBinary(t), append([]string{"land", id, "--json", "--data-dir", dataDir}, args...)...))
		var rep landReport
		if err := json.Unmarshal([]byte(out), &rep); code != wantCode || err != nil {
			t.Fatalf("land %v: exit %d (want %d), %v\n%s\n%s", args, code, wantCode, err, out, errs)
		}
		if checkoutDigest(t, repo) != before {
			t.Fatalf("land changed the person's checkout:\n%s", out)
		}
		return rep
	}
	rep := land(cli.ExitLandRefused, "--check", "test -f approved.txt || { echo approved.txt is missing; exit 1; }", "--on-refuse", "person")
	if len(rep.Outcomes) != 1 || rep.Outcomes[0].Status != "refused" || rep.Outcomes[0].SentBack || !strings.Contains(rep.Outcomes[0].Detail, "approved.txt is missing") {
		t.Fatalf("a goal whose repository check fails: %+v", rep)
	}
	if gitRun(t, repo, "rev-parse", "main") != mainBefore {
		t.Fatal("main moved although the check failed")
	}
	rep = land(cli.ExitOK, "--check", "grep -qx made made.txt")
	if len(rep.Outcomes) != 1 || rep.Outcomes[0].Status != "landed" || !strings.Contains(rep.Outcomes[0].Detail, "grep -qx made made.txt") {
		t.Fatalf("the goal once its check passes: %+v", rep)
	}
	if got := gitRun(t, repo, "show", "main:made.txt"); got != "made" {
		t.Errorf("main's made.txt = %q", got)
	}
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("the goal's worktree %s is still there after it landed", dir)
	}
	if exec.Command("git", "-C", repo, "rev-parse", "--verify", "refs/heads/goal/"+id).Run() == nil {
		t.Error("the goal's branch is still there after it landed")
	}
	if rep = land(cli.ExitOK); rep.Outcomes[0].Status != "already" {
		t.Errorf("landing again: %+v", rep)
	}
	if _, err := os.Stat(filepath.Join(repo, "made.txt")); !os.IsNotExist(err) {
		t.Error("landing wrote into the person's checkout")
	}
}

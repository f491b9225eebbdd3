package main

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/cli"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

// A fleet task run in its own worktree renames, deletes, adds and edits files through its
// real terminal; `clusterspace diff FLEET/TASK` then prints git's diff of its branch, --stat
// its files and counts, --json its pages, and a ref that names nothing exits 64 saying what
// to give.
func TestDiffCLIShowsAFleetTasksBranch(t *testing.T) {
	m := newFleetModel(t, func(pane string, turn int) llmtest.Reply {
		if turn == 0 {
			return toolCall("write_to_terminal", map[string]any{"pane_id": pane,
				"text": "mv old.txt new.txt && rm gone.txt && echo fresh > added.txt && echo more >> README"})
		}
		return fleetClaim(pane + " changed its files")
	})
	var old strings.Builder
	for i := range 30 {
		old.WriteString("line " + strings.Repeat("o", i) + "\n")
	}
	repo, dataDir := gitRepo(t, t.TempDir(), map[string]string{"README": "base\n", "old.txt": old.String(), "gone.txt": "bye\n"}), t.TempDir()
	code, out, errs := runToEnd(t, fleetCmd(t, m, `
name: diff-demo
isolation: worktree
tasks:
  - {id: a, goal: Tidy the files, pane: a-term, check_shell: "test -f added.txt && test ! -f gone.txt"}
`, repo, dataDir, "--json"))
	if code != cli.ExitOK {
		t.Fatalf("fleet run: exit %d\n%s\n%s", code, out, errs)
	}
	fleetID, goalID := "", ""
	for _, line := range strings.Split(out, "\n") {
		var e struct{ FleetID, GoalID string }
		if json.Unmarshal([]byte(line), &e) == nil && e.FleetID != "" {
			fleetID = e.FleetID
			if e.GoalID != "" {
				goalID = e.GoalID
			}
		}
	}
	if fleetID == "" {
		t.Fatalf("fleet run printed no fleet id:\n%s", out)
	}
	ref := fleetID + "/a"
	diff := func(args ...string) (int, string, string) {
		t.Helper()
		return runToEnd(t, exec.Command(testBinary(t), append(append([]string{"diff"}, args...), "--data-dir", dataDir)...))
	}

	code, patch, errs := diff(ref)
	if code != cli.ExitOK {
		t.Fatalf("diff %s: exit %d\n%s\n%s", ref, code, patch, errs)
	}
	for _, want := range []string{"diff --git a/README b/README\n", "+more\n", "diff --git a/old.txt b/new.txt\n", "rename from old.txt\n",
		"diff --git a/gone.txt b/gone.txt\ndeleted file mode", "-bye\n", "diff --git a/added.txt b/added.txt\nnew file mode", "+fresh\n"} {
		if !strings.Contains(patch, want) {
			t.Errorf("diff %s lacks %q:\n%s", ref, want, patch)
		}
	}
	if strings.Contains(patch, "\x1b[") {
		t.Errorf("diff into a pipe is coloured:\n%q", patch)
	}
	// It is git's own diff of the branch.
	branch := "fleet/" + fleetID + "/a"
	gitDiff, err := exec.Command("git", "-C", repo, "diff", "--no-color", "--find-renames", "main..."+branch).Output()
	if err != nil || string(gitDiff) != patch {
		t.Errorf("diff %s differs from git diff main...%s (%v):\n%s\nwant:\n%s", ref, branch, err, patch, gitDiff)
	}
	if code, byGoal, _ := diff(goalID); goalID == "" || code != cli.ExitOK || byGoal != patch {
		t.Errorf("diff %q (a's goal): exit %d\n%s", goalID, code, byGoal)
	}
	if code, coloured, _ := diff(ref, "--color", "always"); code != cli.ExitOK || !strings.Contains(coloured, "\x1b[32m+fresh\x1b[m\n") ||
		!strings.Contains(coloured, "\x1b[31m-bye\x1b[m\n") || !strings.Contains(coloured, "\x1b[1mdiff --git a/README b/README\x1b[m\n") {
		t.Errorf("diff --color always: exit %d\n%q", code, coloured)
	}

	code, stat, errs := diff(ref, "--stat")
	if code != cli.ExitOK {
		t.Fatalf("diff --stat: exit %d\n%s", code, errs)
	}
	for _, want := range []string{" modified README ", "| +1 -0\n", " renamed  old.txt => new.txt | +0 -0\n", " deleted  gone.txt", "| +0 -1\n", " added    added.txt",
		" 4 files changed, 2 insertions(+), 1 deletion(-)\n"} {
		if !strings.Contains(stat, want) {
			t.Errorf("diff --stat lacks %q:\n%s", want, stat)
		}
	}
	if code, names, _ := diff(ref, "--name-only"); code != cli.ExitOK || names != "README\nadded.txt\ngone.txt\nnew.txt\n" {
		t.Errorf("diff --name-only: exit %d\n%s", code, names)
	}

	code, js, errs := diff(ref, "--json")
	var page struct {
		Ref, Kind, Branch, Base, Tip, Patch string
		Files                               []struct{ Path, OldPath, Status string }
		NextOffset                          int
	}
	if err := json.Unmarshal([]byte(js), &page); code != cli.ExitOK || err != nil {
		t.Fatalf("diff --json: exit %d, %v\n%s\n%s", code, err, js, errs)
	}
	if page.Ref != ref || page.Kind != "task" || page.Branch != branch || page.Patch != patch || len(page.Files) != 4 || page.NextOffset != 0 ||
		page.Base == "" || page.Tip == "" {
		t.Errorf("diff --json page: %+v", page)
	}
	code, js, _ = diff(ref, "--stat", "--json")
	page.Patch = "unset"
	if err := json.Unmarshal([]byte(js), &page); code != cli.ExitOK || err != nil || page.Patch != "" || len(page.Files) != 4 {
		t.Errorf("diff --stat --json: exit %d, %v\n%s", code, err, js)
	}

	for _, c := range []struct{ ref, want string }{
		{fleetID + "/zz", "fleet " + fleetID + " has no task zz; its tasks are a"},
		{"fleet-nope/a", "fleet fleet-nope does not exist"},
		{"goal-nope", "no goal or fleet task is goal-nope"},
		{fleetID, fleetID + " is a fleet; review one of its tasks as " + fleetID + "/TASK_ID (its tasks are a)"},
	} {
		if code, _, errs := diff(c.ref); code != cli.ExitUsage || !strings.Contains(errs, c.want) {
			t.Errorf("diff %s: exit %d (want %d); stderr:\n%s", c.ref, code, cli.ExitUsage, errs)
		}
	}
	if code, _, errs := diff(ref, "--stat", "--name-only"); code != cli.ExitUsage || !strings.Contains(errs, "give --stat or --name-only, not both") {
		t.Errorf("diff --stat --name-only: exit %d\n%s", code, errs)
	}
}

// A goal run with --worktree is diffed by its id.
func TestDiffCLIShowsAGoalsOwnBranch(t *testing.T) {
	repo, dataDir := gitRepo(t, t.TempDir(), map[string]string{"README": "hello\n"}), t.TempDir()
	out := runGoalInWorktree(t, repo, dataDir, "echo ok > made.txt && echo bye >> README", "test -f made.txt", "--json")
	id := lastJSONField(out, "goalId")
	if id == "" {
		t.Fatalf("goal run printed no goal id:\n%s", out)
	}
	code, patch, errs := runToEnd(t, exec.Command(testBinary(t), "diff", id, "--data-dir", dataDir))
	want := "diff --git a/README b/README\n"
	if code != cli.ExitOK || !strings.HasPrefix(patch, want) || !strings.Contains(patch, "+bye\n") || !strings.Contains(patch, "diff --git a/made.txt b/made.txt\nnew file mode") {
		t.Fatalf("diff %s: exit %d\n%s\n%s", id, code, patch, errs)
	}
	code, stat, _ := runToEnd(t, exec.Command(testBinary(t), "diff", id, "--stat", "--data-dir", dataDir))
	if code != cli.ExitOK || !strings.HasSuffix(stat, " 2 files changed, 2 insertions(+), 0 deletions(-)\n") {
		t.Fatalf("diff %s --stat: exit %d\n%s", id, code, stat)
	}
}

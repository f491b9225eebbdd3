package main

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/cli"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

// landRepo is a git repository on main whose own check (check.sh) fails when a.txt is there
// and b.txt does not say "compatible": task b passes its own check alone, but breaks the
// repository once a has landed. The person's checkout has uncommitted work in it.
func landRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "check.sh"), []byte("if [ -f a.txt ] && [ -f b.txt ] && ! grep -qx compatible b.txt; then echo 'b.txt is not compatible with a.txt'; exit 1; fi\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "README"), []byte("base\n"), 0o644)
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "."}, {"commit", "-q", "-m", "base"}} {
		gitRun(t, dir, args...)
	}
	os.WriteFile(filepath.Join(dir, "README"), []byte("the person's edit, not committed\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("the person's own notes\n"), 0o644)
	return dir
}

// checkoutDigest hashes every file of the person's checkout outside .git, names and bytes.
func checkoutDigest(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			b, _ := os.ReadFile(p)
			fmt.Fprintf(h, "%s\x00%x\x00", p, sha256.Sum256(b))
		}
		return nil
	})
	return fmt.Sprintf("%x", h.Sum(nil))
}

// The scenario, through `fleet run` and the CLI: a and c land; b passes its own
// check but breaks the repository's once a has landed, so it is refused and sent back to its
// agent with the failing output; after `fleet resume` it fixes and verifies again, and the
// next `land` lands it. The person's checkout, uncommitted work and all, never changes.
func TestLandCLIRefusesWhatBreaksTheTargetAndLandsItOnceFixed(t *testing.T) {
	m := newFleetModel(t, func(pane string, turn int) llmtest.Reply {
		switch {
		case pane == "b-term" && turn == 2: // sent back: the failing output is in its prompt
			return toolCall("write_to_terminal", map[string]any{"pane_id": pane, "text": "echo compatible > b.txt"})
		case turn == 0:
			file := strings.TrimSuffix(pane, "-term") + ".txt"
			return toolCall("write_to_terminal", map[string]any{"pane_id": pane, "text": "echo " + strings.ToUpper(file[:1]) + " > " + file})
		}
		return fleetClaim(pane + " wrote its file")
	})
	repo, dataDir := landRepo(t), t.TempDir()
	before := checkoutDigest(t, repo)
	code, out, errs := runToEnd(t, fleetCmd(t, m, `
name: land-demo
isolation: worktree
land: {check: "sh check.sh"}
tasks:
  - {id: a, goal: Write a.txt, pane: a-term, check_shell: "test -f a.txt"}
  - {id: b, goal: Write b.txt, pane: b-term, check_shell: "test -f b.txt"}
  - {id: c, goal: Write c.txt, pane: c-term, check_shell: "test -f c.txt", depends_on: [a]}
`, repo, dataDir, "--json"))
	if code != cli.ExitOK {
		t.Fatalf("fleet run: exit %d\n%s\n%s", code, out, errs)
	}
	fleetID := lastJSONField(out, "fleetId")
	if fleetID == "" {
		t.Fatalf("fleet run printed no fleet id:\n%s", out)
	}
	mainBefore := gitRun(t, repo, "rev-parse", "main")
	if got := checkoutDigest(t, repo); got != before {
		t.Fatal("fleet run changed the person's checkout")
	}

	land := func(wantCode int) landReport {
		t.Helper()
		code, out, errs := runToEnd(t, exec.Command(testBinary(t), "land", fleetID, "--json", "--data-dir", dataDir))
		var rep landReport
		if err := json.Unmarshal([]byte(out), &rep); code != wantCode || err != nil {
			t.Fatalf("land: exit %d (want %d), %v\n%s\n%s", code, wantCode, err, out, errs)
		}
		if got := checkoutDigest(t, repo); got != before {
			t.Fatalf("land changed the person's checkout:\n%s", out)
		}
		return rep
	}
	rep := land(cli.ExitLandRefused)
	if got := rep.statuses(); got != "a=landed b=refused c=landed" {
		t.Fatalf("first land: %s\n%+v", got, rep)
	}
	b := rep.outcome("b")
	if !b.SentBack || !strings.Contains(b.Detail, "b.txt is not compatible with a.txt") || !strings.Contains(b.Detail, "sh check.sh") {
		t.Errorf("b's refusal (want the repository check's output, sent back to its agent): %+v", b)
	}
	if files := gitRun(t, repo, "ls-tree", "--name-only", "main"); !strings.Contains(files, "a.txt") || !strings.Contains(files, "c.txt") || strings.Contains(files, "b.txt") {
		t.Errorf("main after the first land holds:\n%s", files)
	}
	if gitRun(t, repo, "merge-base", "--is-ancestor", mainBefore, "main") != "" {
		t.Error("main did not move forward")
	}
	if !strings.Contains(rep.Note, "fleet resume "+fleetID) {
		t.Errorf("the report does not say how b's agent goes on: %q", rep.Note)
	}

	code, out, errs = runToEnd(t, exec.Command(testBinary(t), "fleet", "resume", fleetID, "--base-url", m.srv.OpenAIURL(), "--model", "scripted",
		"--data-dir", dataDir, "--approve", "deny"))
	if code != cli.ExitOK {
		t.Fatalf("fleet resume after b was sent back: exit %d\n%s\n%s", code, out, errs)
	}
	var sawFeedback bool
	for _, r := range m.requests("b-term") {
		sawFeedback = sawFeedback || strings.Contains(string(r.Body), "b.txt is not compatible with a.txt")
	}
	if !sawFeedback {
		t.Error("b's agent never saw the failing output of the repository's check")
	}

	rep = land(cli.ExitOK)
	if got := rep.statuses(); got != "a=already b=landed c=already" {
		t.Fatalf("second land: %s\n%+v", got, rep)
	}
	if got := gitRun(t, repo, "show", "main:b.txt"); got != "compatible" {
		t.Errorf("main's b.txt = %q", got)
	}
	// The report's command brings the person's files forward, keeping their own changes.
	i := strings.Index(rep.Note, "git -C ")
	if i < 0 {
		t.Fatalf("the report gives no command to bring the checkout forward: %q", rep.Note)
	}
	if out, err := exec.Command("sh", "-c", rep.Note[i:]).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", rep.Note[i:], err, out)
	}
	for file, want := range map[string]string{"a.txt": "A\n", "b.txt": "compatible\n", "c.txt": "C\n",
		"README": "the person's edit, not committed\n", "notes.txt": "the person's own notes\n"} {
		if b, _ := os.ReadFile(filepath.Join(repo, file)); string(b) != want {
			t.Errorf("after the suggested command, %s holds %q, want %q", file, b, want)
		}
	}
	if st := gitRun(t, repo, "status", "--porcelain"); st != "M README\n?? notes.txt" {
		t.Errorf("git status after the suggested command:\n%s", st)
	}

	landed := filepath.Join(t.TempDir(), "landed")
	gitRun(t, repo, "worktree", "add", "-q", "--detach", landed, "main")
	if out, err := exec.Command("sh", "-c", "cd "+landed+" && sh check.sh").CombinedOutput(); err != nil {
		t.Errorf("the repository's check fails on what landed: %v\n%s", err, out)
	}

	show, err := exec.Command(testBinary(t), "fleet", "show", fleetID, "--json", "--data-dir", dataDir).Output()
	var f struct {
		Tasks []struct {
			ID       string
			Worktree struct {
				Dir, Branch string
				Pruned      bool
			}
			Review struct {
				Land  string
				Story []struct{ Kind, Text string }
			}
		}
	}
	if err != nil || json.Unmarshal(show, &f) != nil || len(f.Tasks) != 3 {
		t.Fatalf("fleet show: %v\n%s", err, show)
	}
	for _, task := range f.Tasks {
		var kinds []string
		for _, n := range task.Review.Story {
			kinds = append(kinds, n.Kind)
		}
		want := "landed"
		if task.ID == "b" {
			want = "refused reopened landed"
		}
		if strings.Join(kinds, " ") != want || task.Review.Land != "landed" {
			t.Errorf("task %s's story: %v (land %q), want %s", task.ID, kinds, task.Review.Land, want)
		}
		if _, err := os.Stat(task.Worktree.Dir); err == nil || !task.Worktree.Pruned {
			t.Errorf("task %s's worktree %s is still there after it landed", task.ID, task.Worktree.Dir)
		}
		if exec.Command("git", "-C", repo, "rev-parse", "--verify", "refs/heads/"+task.Worktree.Branch).Run() == nil {
			t.Errorf("task %s's branch %s is still there after it landed", task.ID, task.Worktree.Branch)
		}
	}
}

type landReport struct {
	Outcomes []struct {
		TaskID, Status, Detail, Commit string
		SentBack                       bool
	}
	Note string
}

func (r landReport) statuses() string {
	var s []string
	for _, o := range r.Outcomes {
		s = append(s, o.TaskID+"="+o.Status)
	}
	return strings.Join(s, " ")
}

func (r landReport) outcome(task string) (o struct {
	TaskID, Status, Detail, Commit string
	SentBack                       bool
}) {
	for _, x := range r.Outcomes {
		if x.TaskID == task {
			return x
		}
	}
	return o
}

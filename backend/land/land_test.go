package land

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// repo makes a git repository on main with one commit, and a branch "work" from it that
// writes file with text; main's checkout gets an uncommitted change, which no landing may
// touch.
func repo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	run(t, dir, "init", "-q", "-b", "main")
	write(t, dir, "README", "base\n")
	run(t, dir, "add", ".")
	run(t, dir, "commit", "-qm", "base")
	run(t, dir, "branch", "work")
	return dir
}

func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	c := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-C", dir}, args...)...)
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func write(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// commitOn commits file=text on branch through a worktree of its own (detached, so main can
// move while the person has it checked out, as another landing would move it).
func commitOn(t *testing.T, repo, branch, file, text string) {
	t.Helper()
	wt := filepath.Join(t.TempDir(), "wt")
	run(t, repo, "worktree", "add", "-q", "--detach", wt, branch)
	write(t, wt, file, text)
	run(t, wt, "add", ".")
	run(t, wt, "commit", "-qm", "change "+file)
	run(t, repo, "update-ref", "refs/heads/"+branch, run(t, wt, "rev-parse", "HEAD"))
	run(t, repo, "worktree", "remove", "--force", wt)
}

func shell(name, command string) Check {
	return Check{Name: name, Run: func(ctx context.Context, dir string) (bool, string, error) {
		c := exec.CommandContext(ctx, "bash", "-c", command)
		c.Dir = dir
		out, err := c.CombinedOutput()
		return err == nil, string(out), nil
	}}
}

// fileCheck passes when dir holds file with text.
func fileCheck(file, text string) Check {
	return Check{Name: "file " + file, Run: func(_ context.Context, dir string) (bool, string, error) {
		b, err := os.ReadFile(filepath.Join(dir, file))
		return err == nil && string(b) == text, "file " + file + " holds " + string(b), nil
	}}
}

func personsFiles(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	for _, n := range []string{"README", "notes.txt"} {
		data, _ := os.ReadFile(filepath.Join(dir, n))
		b.WriteString(n + "=" + string(data) + ";")
	}
	return b.String()
}

func TestLandReplaysVerifiesAndMovesOnlyTheTarget(t *testing.T) {
	for _, strategy := range []Strategy{Rebase, Merge} {
		t.Run(string(strategy), func(t *testing.T) {
			dir := repo(t)
			commitOn(t, dir, "work", "a.txt", "A\n")
			commitOn(t, dir, "main", "other.txt", "moved on\n") // main moved since work began
			write(t, dir, "notes.txt", "the person's uncommitted work\n")
			write(t, dir, "README", "edited, not committed\n")
			before := personsFiles(t, dir)
			oldMain := run(t, dir, "rev-parse", "main")

			res, err := Land(context.Background(), Request{Repo: dir, Target: "main", Branch: "work", Strategy: strategy,
				Checks: []Check{fileCheck("a.txt", "A\n"), fileCheck("other.txt", "moved on\n")}})
			if err != nil || !res.Landed {
				t.Fatalf("Land: %+v, %v", res, err)
			}
			if res.Old != oldMain || run(t, dir, "rev-parse", "main") != res.New || len(res.Passed) != 2 {
				t.Errorf("main went from %s to %s; result %+v", oldMain, run(t, dir, "rev-parse", "main"), res)
			}
			if got := run(t, dir, "show", "main:a.txt"); got != "A" {
				t.Errorf("main's a.txt = %q", got)
			}
			parents := strings.Fields(run(t, dir, "rev-list", "--parents", "-n", "1", "main"))
			if strategy == Merge && len(parents) != 3 || strategy == Rebase && len(parents) != 2 {
				t.Errorf("%s landed as a commit with parents %v", strategy, parents[1:])
			}
			if after := personsFiles(t, dir); after != before {
				t.Errorf("the person's checkout changed:\nbefore %s\nafter  %s", before, after)
			}
			if res.CheckedOut == "" {
				t.Error("the result does not say main is checked out in the person's worktree")
			}
			noScratchLeft(t, dir)
		})
	}
}

// noScratchLeft fails the test if a landing left its scratch worktree in dir's list.
func noScratchLeft(t *testing.T, dir string) {
	t.Helper()
	if list := run(t, dir, "worktree", "list"); strings.Count(list, "\n") != 0 {
		t.Errorf("the scratch worktree was left behind:\n%s", list)
	}
}

// mainStays fails the test if main is no longer at old; why says why it should not move.
func mainStays(t *testing.T, dir, old, why string) {
	t.Helper()
	if run(t, dir, "rev-parse", "main") != old {
		t.Error("main moved although " + why)
	}
}

func TestLandRefusesConflictsAndFailingChecksAndLandsNothing(t *testing.T) {
	dir := repo(t)
	commitOn(t, dir, "work", "README", "the work's README\n")
	commitOn(t, dir, "main", "README", "main's README\n")
	oldMain := run(t, dir, "rev-parse", "main")
	res, err := Land(context.Background(), Request{Repo: dir, Target: "main", Branch: "work"})
	if err != nil || res.Landed || len(res.Conflict) != 1 || res.Conflict[0] != "README" {
		t.Fatalf("a conflicting landing: %+v, %v", res, err)
	}
	mainStays(t, dir, oldMain, "the landing conflicted")

	dir = repo(t)
	commitOn(t, dir, "work", "a.txt", "A\n")
	oldMain = run(t, dir, "rev-parse", "main")
	res, err = Land(context.Background(), Request{Repo: dir, Target: "main", Branch: "work",
		Checks: []Check{fileCheck("a.txt", "A\n"), shell("the repository's check", "echo 2 tests failed; exit 1")}})
	if err != nil || res.Landed || res.Failed != "the repository's check" || !strings.Contains(res.Detail, "2 tests failed") {
		t.Fatalf("a landing whose check fails: %+v, %v", res, err)
	}
	mainStays(t, dir, oldMain, "a check failed")
	noScratchLeft(t, dir)
}

// A target that moves while the checks run is replayed onto again: what lands was verified
// on top of everything on the target.
func TestLandReplaysWhenTheTargetMovedDuringTheChecks(t *testing.T) {
	dir := repo(t)
	commitOn(t, dir, "work", "a.txt", "A\n")
	moved := false
	sawLate := false
	race := Check{Name: "a check during which main moves", Run: func(_ context.Context, scratch string) (bool, string, error) {
		if !moved {
			moved = true
			commitOn(t, dir, "main", "late.txt", "late\n")
			return true, "", nil
		}
		_, err := os.Stat(filepath.Join(scratch, "late.txt"))
		sawLate = err == nil
		return true, "", nil
	}}
	res, err := Land(context.Background(), Request{Repo: dir, Target: "main", Branch: "work", Checks: []Check{race}})
	if err != nil || !res.Landed || res.Replays != 2 || !sawLate {
		t.Fatalf("landing while main moved: %+v, %v (second run saw late.txt: %v)", res, err, sawLate)
	}
	if got := run(t, dir, "show", "main:late.txt"); got != "late" {
		t.Errorf("main lost the commit that landed meanwhile: late.txt = %q", got)
	}
}

func TestLandOfWorkAlreadyOnTheTargetMovesNothing(t *testing.T) {
	dir := repo(t)
	res, err := Land(context.Background(), Request{Repo: dir, Target: "main", Branch: "work"})
	if err != nil || !res.Already || res.Landed {
		t.Fatalf("%+v, %v", res, err)
	}
	if _, err := Land(context.Background(), Request{Repo: dir, Target: "", Branch: "work"}); err == nil || !strings.Contains(err.Error(), "detached HEAD") {
		t.Errorf("no target: %v", err)
	}
	if _, err := Land(context.Background(), Request{Repo: dir, Target: "main", Branch: "gone"}); err == nil || !strings.Contains(err.Error(), "gone") {
		t.Errorf("no branch: %v", err)
	}
}

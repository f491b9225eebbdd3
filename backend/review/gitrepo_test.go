package review_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/review"
	"github.com/clusterspace/clusterspace/backend/worktree"
)

// run runs git in dir and returns its output, failing the test on an error.
func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t.invalid")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func write(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// lines is n numbered lines.
func lines(prefix string, n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(prefix)
		b.WriteString(" line ")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString("\n")
	}
	return b.String()
}

// changedRepo makes a repository on main and a branch "work" that adds, modifies, deletes,
// renames and adds a binary file, committed in a worktree of its own, and returns the
// subject of it (a finished goal's).
func changedRepo(t *testing.T) review.Subject {
	t.Helper()
	repo := t.TempDir()
	run(t, repo, "init", "-q", "-b", "main")
	write(t, repo, "keep.txt", "one\ntwo\nthree\n")
	write(t, repo, "gone.txt", "bye\n")
	write(t, repo, "src/old.go", lines("package moved", 40))
	run(t, repo, "add", "-A")
	run(t, repo, "commit", "-q", "-m", "base")
	base := strings.TrimSpace(run(t, repo, "rev-parse", "HEAD"))
	dir := filepath.Join(t.TempDir(), "wt")
	run(t, repo, "worktree", "add", "-q", "-b", "work", dir, base)
	write(t, dir, "keep.txt", "one\n2\nthree\nfour\n")
	os.Remove(filepath.Join(dir, "gone.txt"))
	run(t, dir, "mv", "src/old.go", "src/new.go")
	write(t, dir, "src/new.go", lines("package moved", 40)+"// one more\n")
	write(t, dir, "added.txt", "fresh\n")
	write(t, dir, "bin.dat", "\x00\x01\x02binary\x00")
	run(t, dir, "add", "-A")
	run(t, dir, "commit", "-q", "-m", "work")
	// The target moves on meanwhile: the diff is still of the branch's own work.
	write(t, repo, "keep.txt", "one\ntwo\nthree\nupstream\n")
	run(t, repo, "commit", "-q", "-am", "upstream")
	return review.Subject{Ref: "goal-w", Kind: review.KindGoal, GoalID: "goal-w", Status: "completed",
		Worktree: worktree.Worktree{Repo: repo, Dir: dir, WorkDir: dir, Branch: "work", Base: base, Target: "main"}}
}

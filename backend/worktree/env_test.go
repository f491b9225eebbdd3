package worktree

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func gitT(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// repoWith is a new repository on main whose one commit holds files (path → content); it
// returns the repository and that commit.
func repoWith(t *testing.T, files map[string]string) (repo, base string) {
	t.Helper()
	repo = t.TempDir()
	gitT(t, repo, "init", "-q", "-b", "main")
	for name, text := range files {
		path := filepath.Join(repo, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitT(t, repo, "add", ".")
	gitT(t, repo, "commit", "-qm", "base")
	return repo, gitT(t, repo, "rev-parse", "HEAD")
}

// The listed untracked files of the person's checkout are copied into a new worktree (a dir
// with what is in it, a symlinked file as its content), before the setup, which sees them
// and the work's PORT and TMPDIR; the work's commit leaves the copies and the setup's files
// out but keeps its own change, even to a file beside a copy; a file the worktree has is
// not overwritten; a missing file is an error naming it.
func TestCopyInCopiesUntrackedFilesAndKeepsThemOffTheBranch(t *testing.T) {
	ctx := context.Background()
	repo, _ := repoWith(t, map[string]string{"config/app.yaml": "tracked\n"})
	secret := filepath.Join(t.TempDir(), "real.env")
	os.WriteFile(secret, []byte("KEY=1\n"), 0o600)
	os.Symlink(secret, filepath.Join(repo, ".env"))
	os.WriteFile(filepath.Join(repo, "config", "local.yaml"), []byte("local\n"), 0o644)
	os.MkdirAll(filepath.Join(repo, "fixtures", "db"), 0o755)
	os.WriteFile(filepath.Join(repo, "fixtures", "db", "seed.sql"), []byte("seed\n"), 0o644)

	dir := filepath.Join(t.TempDir(), "wt")
	wt := Worktree{Repo: repo, Dir: dir, WorkDir: dir, Branch: "work", PortBase: 21230, PortCount: PortsPerRange}
	wt.Scratch = ScratchDirOf(dir)
	if fresh, err := wt.Add(ctx, "HEAD"); err != nil || !fresh {
		t.Fatalf("add: %v %v", fresh, err)
	}
	if err := wt.MakeScratch(); err != nil {
		t.Fatal(err)
	}
	if err := wt.CopyIn(ctx, repo, []string{".env", "config/local.yaml", "fixtures", "config/app.yaml"}); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, ".env")); err != nil || string(b) != "KEY=1\n" {
		t.Fatalf(".env in the worktree: %q %v", b, err)
	}
	if fi, _ := os.Lstat(filepath.Join(dir, ".env")); fi == nil || fi.Mode()&os.ModeSymlink != 0 {
		t.Fatal(".env was copied as a symlink")
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "fixtures", "db", "seed.sql")); string(b) != "seed\n" {
		t.Fatalf("fixtures/db/seed.sql: %q", b)
	}
	setup := `test -f .env && echo "$PORT $CLUSTERSPACE_PORT_BASE $CLUSTERSPACE_PORT_COUNT $TMPDIR" > setup-saw && echo dep > dep.js`
	if err := RunSetup(ctx, wt, setup); err != nil {
		t.Fatal(err)
	}
	want := "21230 21230 10 " + filepath.Join(wt.Scratch, "tmp") + "\n"
	if b, _ := os.ReadFile(filepath.Join(dir, "setup-saw")); string(b) != want {
		t.Fatalf("the setup saw %q, want %q", b, want)
	}
	// A resumed worktree keeps its own copy.
	os.WriteFile(filepath.Join(dir, "config", "local.yaml"), []byte("edited\n"), 0o644)
	if err := wt.CopyIn(ctx, repo, []string{"config/local.yaml"}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "config", "local.yaml")); string(b) != "edited\n" {
		t.Fatalf("a second copy overwrote the worktree's own: %q", b)
	}
	os.WriteFile(filepath.Join(dir, "config", "app.yaml"), []byte("changed by the task\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "work.txt"), []byte("work\n"), 0o644)
	wt.Base = gitT(t, repo, "rev-parse", "HEAD")
	wt.Finish(ctx, "the work")
	files := strings.Fields(gitT(t, repo, "ls-tree", "-r", "--name-only", "work"))
	if !slices.Equal(files, []string{"config/app.yaml", "work.txt"}) {
		t.Errorf("the branch holds %v; want the tracked file and the work only (no .env, config/local.yaml, fixtures, setup files)", files)
	}
	if got := gitT(t, repo, "show", "work:config/app.yaml"); got != "changed by the task" {
		t.Errorf("the task's change to a tracked file beside a copy was left out: %q", got)
	}

	err := wt.CopyIn(ctx, repo, []string{"missing.env"})
	if err == nil || !strings.Contains(err.Error(), "missing.env is not in the checkout") {
		t.Fatalf("a missing file: %v", err)
	}
	if err := wt.RemoveScratch(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Dir(wt.Scratch)); !os.IsNotExist(err) {
		t.Errorf("the scratch dirs' dir is still there: %v", err)
	}
}

// A path leading out of the repository, or into git's own files, is refused naming why.
func TestCheckCopyPathRefusesPathsOutsideTheRepository(t *testing.T) {
	for p, want := range map[string]string{
		"":             "empty",
		"  ":           "empty",
		"/etc/passwd":  "absolute",
		"../x":         "leaves the repository",
		"a/../../x":    "leaves the repository",
		"a\tb":         "control character",
		".":            "the repository itself",
		".git/config":  "inside .git",
		"./.git/hooks": "inside .git",
	} {
		if _, err := CheckCopyPath(p); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", p, err, want)
		}
	}
	if got, err := CheckCopyPath("./config//local.yaml"); err != nil || got != "config/local.yaml" {
		t.Errorf("a clean path: %q %v", got, err)
	}
}

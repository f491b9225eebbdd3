package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/cli"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

// gitRun runs git in dir, with an identity of its own so a machine without one commits too.
func gitRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v: %s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// gitRepo makes dir a git repository on main whose first commit holds files (name: content;
// an empty commit when there are none), and returns dir.
func gitRepo(t *testing.T, dir string, files map[string]string) string {
	t.Helper()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitRun(t, dir, "init", "-q", "-b", "main")
	gitRun(t, dir, "add", ".")
	gitRun(t, dir, "commit", "-q", "--allow-empty", "-m", "base")
	return dir
}

// `goal run --worktree` works in a worktree and branch of its own: the agent's shell writes
// there, the check passes there, the person's checkout (with its uncommitted change) is left
// as it was, the work is committed on the branch, and the report names the branch and its
// diff stat; goal show names the branch.
func TestGoalCLIRunsInItsOwnWorktree(t *testing.T) {
	repo, dataDir := gitRepo(t, t.TempDir(), map[string]string{"README": "hello\n"}), t.TempDir()
	os.WriteFile(filepath.Join(repo, "README"), []byte("hello, half-edited\n"), 0o644)
	head := gitRun(t, repo, "rev-parse", "HEAD")

	out := runGoalInWorktree(t, repo, dataDir, "echo ok > made.txt", "test -f made.txt")
	wantOutput(t, out, "step 1    ok  write_to_terminal", "verify    passed", "ended     completed", "made.txt | 1 +")
	m := regexp.MustCompile(`Branch: goal/(goal-[0-9a-f]+) \(worktree (\S+)\)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("the report names no branch:\n%s", out)
	}
	id, dir := m[1], m[2]
	if want := filepath.Join(repo, ".git", "clusterspace-worktrees", id); dir != want {
		t.Fatalf("worktree %s, want %s", dir, want)
	}
	if got := gitRun(t, repo, "show", "goal/"+id+":made.txt"); got != "ok" {
		t.Fatalf("made.txt on the branch is %q", got)
	}
	if _, err := os.Stat(filepath.Join(repo, "made.txt")); !os.IsNotExist(err) {
		t.Fatalf("made.txt reached the person's checkout (%v)", err)
	}
	if b, _ := os.ReadFile(filepath.Join(repo, "README")); string(b) != "hello, half-edited\n" || gitRun(t, repo, "rev-parse", "HEAD") != head {
		t.Fatalf("the person's checkout changed: README %q", b)
	}
	if st := gitRun(t, repo, "status", "--porcelain"); st != "M README" {
		t.Fatalf("the person's checkout's status is %q, want only their own edit", st)
	}

	show := exec.Command(testBinary(t), "goal", "show", id, "--data-dir", dataDir)
	code, out, errs := runToEnd(t, show)
	if code != 0 {
		t.Fatalf("goal show: exit %d\n%s\n%s", code, out, errs)
	}
	wantOutput(t, out, "BRANCH: goal/"+id+" (onto main), worktree "+dir)
}

// --worktree outside a git repository is refused with 64, naming the field and the dir.
func TestGoalCLIWorktreeNeedsARepository(t *testing.T) {
	code, _, errs := runGoalCLI(t, llmtest.Script{}, "--goal", "x", "--check-manual", "--worktree")
	if code != cli.ExitUsage || !strings.Contains(errs, "worktree: ") || !strings.Contains(errs, "git init it and commit once, or drop --worktree") {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
}

// runGoalInWorktree runs `goal run --worktree` in repo (its sandbox) on dataDir: the
// scripted agent types command into its terminal and claims, checked by check. It fails the
// test unless the goal completes, and returns what the command printed.
func runGoalInWorktree(t *testing.T, repo, dataDir, command, check string, extra ...string) string {
	t.Helper()
	srv := llmtest.New(t, llmtest.Script{Replies: []llmtest.Reply{
		toolCall("write_to_terminal", map[string]string{"pane_id": "term-1", "text": command}),
		toolCall("claim_complete", map[string]string{"rationale": "made.txt written"}),
	}})
	cmd := exec.Command(testBinary(t), append([]string{"goal", "run", "--base-url", srv.OpenAIURL(), "--model", "scripted", "--sandbox", repo,
		"--data-dir", dataDir, "--approve", "deny", "--critic-every", "0", "--worktree",
		"--goal", "Write made.txt", "--check-shell", check}, extra...)...)
	cmd.Dir = repo
	code, out, errs := runToEnd(t, cmd)
	if code != 0 {
		t.Fatalf("goal run --worktree: exit %d\n%s\n%s", code, out, errs)
	}
	return out
}

// Package worktree is a piece of work's own git worktree and branch: made from a base,
// set up once, its work committed on its branch, removed when done. Fleet tasks and goals run
// with --worktree both work in one.
package worktree

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// Limits of worktree isolation.
const (
	// MaxSetup bounds a fleet's setup command in one worktree (npm ci on a cold cache takes
	// minutes; a hung one must not hold a slot forever).
	MaxSetup = 15 * time.Minute
	// maxSetupOutput is how much of a failed setup's output the task's report keeps (the end,
	// where the error is).
	maxSetupOutput = 4000
	// DirName is where a repository's worktrees of the app live, inside its git dir: git
	// ignores it, a confined shell whose sandbox is the repository can reach it, and it goes
	// away with the repository.
	DirName = "clusterspace-worktrees"
)

// Worktree is a piece of work's own git worktree and branch.
type Worktree struct {
	Repo string `json:"repo"` // the repository's top-level dir
	Dir  string `json:"dir"`  // the worktree
	// WorkDir is where the goal works: the worktree, or the same subdir of it that its
	// sandbox is of the repository.
	WorkDir string `json:"workDir"`
	Branch  string `json:"branch"`
	Base    string `json:"base"` // the commit the branch started from
	// Target is the branch the work lands on: the one checked out in the repository when
	// the work began ("" when it was a detached HEAD; landing then needs one named).
	Target string `json:"target,omitempty"`
	// Commit is the branch's tip once the work ended (committed by the app).
	Commit    string `json:"commit,omitempty"`
	DiffStat  string `json:"diffStat,omitempty"` // git diff --stat base...branch
	SetupDone bool   `json:"setupDone,omitempty"`
	Pruned    bool   `json:"pruned,omitempty"` // the worktree was removed; the branch stays
}

// gitIdentity signs the commits the app makes of a task's or goal's work.
var gitIdentity = []string{"GIT_AUTHOR_NAME=ClusterSpace fleet", "GIT_AUTHOR_EMAIL=fleet@clusterspace.invalid",
	"GIT_COMMITTER_NAME=ClusterSpace fleet", "GIT_COMMITTER_EMAIL=fleet@clusterspace.invalid"}

// Git runs git in dir; an error carries git's own words.

func Git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), gitIdentity...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return strings.TrimSpace(string(out)), nil
}

// RepoHead checks that dir is in a git repository with a commit, and returns the
// repository's top-level dir and its HEAD commit.
func RepoHead(ctx context.Context, dir string) (top, head string, err error) {
	if dir == "" {
		return "", "", errors.New("isolation: worktree needs a git repository to work in: give the fleet a sandbox (--sandbox DIR) or a work dir inside one")
	}
	top, err = Git(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return "", "", fmt.Errorf("isolation: worktree: %s is not in a git repository (git init it, or drop isolation): %v", dir, err)
	}
	head, err = Git(ctx, dir, "rev-parse", "--verify", "HEAD^{commit}")
	if err != nil {
		return "", "", fmt.Errorf("isolation: worktree: the repository at %s has no commit yet; commit once so tasks have a base to branch from", top)
	}
	return top, head, nil
}

// MergeDependency merges the branch of a further piece of work this one depends on (a
// fan-in task's other dependencies) into its worktree. A conflict is reported naming its files, and the merge is aborted: the worktree
// is never left half-merged.
func MergeDependency(ctx context.Context, wt *Worktree, branch string) error {
	_, err := Git(ctx, wt.Dir, "merge", "--no-edit", branch)
	if err == nil {
		return nil
	}
	files, _ := Git(ctx, wt.Dir, "diff", "--name-only", "--diff-filter=U")
	if _, abortErr := Git(ctx, wt.Dir, "merge", "--abort"); abortErr != nil {
		err = errors.Join(err, abortErr)
	}
	if files != "" {
		return fmt.Errorf("the work of the tasks it depends on conflicts: merging branch %s into %s conflicts in %s. The merge was aborted; make those tasks change different files (or have one depend on the other), or merge the branches by hand and retry the task",
			branch, wt.Branch, strings.Join(strings.Fields(files), ", "))
	}
	return fmt.Errorf("merging the work of the tasks it depends on (branch %s) into %s failed, and was aborted: %v", branch, wt.Branch, err)
}

// Finish commits what the work left in the worktree on its branch, with message (so nothing
// is lost when the worktree is removed; what its setup wrote stays out), and records the
// branch's tip and diff stat.
func (wt *Worktree) Finish(ctx context.Context, message string) {
	if _, err := Git(ctx, wt.Dir, append([]string{"add", "-A", "--", "."}, SetupExcludes(ctx, wt)...)...); err == nil {
		if st, _ := Git(ctx, wt.Dir, "status", "--porcelain"); st != "" {
			Git(ctx, wt.Dir, "commit", "-q", "--no-verify", "-m", message) // Best effort: the diff stat below shows what got in.
		}
	}
	if c, err := Git(ctx, wt.Dir, "rev-parse", "HEAD"); err == nil {
		wt.Commit = c
	}
	if wt.Base != "" {
		stat, err := Git(ctx, wt.Dir, "diff", "--stat", wt.Base+"..."+wt.Branch)
		if err != nil {
			stat = "(no diff stat: " + err.Error() + ")"
		}
		wt.DiffStat = stat
	}
}

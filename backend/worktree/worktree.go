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
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// adminLocks holds a mutex per repository dir for the worktree commands Git runs.
var adminLocks sync.Map

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
	// PortBase and PortCount are the work's own range of TCP ports (PORT is PortBase), so
	// two pieces of work can run the same dev server at once; 0 without (see ports.go).
	PortBase  int `json:"portBase,omitempty"`
	PortCount int `json:"portCount,omitempty"`
	// Scratch is the work's own dir for temporary files and caches (TMPDIR and XDG_CACHE_HOME
	// point inside it), next to its worktree; removed with it.
	Scratch string `json:"scratch,omitempty"`
}

// gitIdentity signs the commits the app makes of a task's or goal's work.
var gitIdentity = []string{"GIT_AUTHOR_NAME=ClusterSpace fleet", "GIT_AUTHOR_EMAIL=fleet@clusterspace.invalid",
	"GIT_COMMITTER_NAME=ClusterSpace fleet", "GIT_COMMITTER_EMAIL=fleet@clusterspace.invalid"}

// Git runs git in dir; an error carries git's own words. The commands that change a
// repository's list of worktrees (git worktree add, prune, remove, …) run one at a time per
// repository: git does not guard them against each other, and a prune that runs while another
// task's add has made the worktree's admin dir but not yet locked it deletes that dir, so the
// add fails ("failed to read .git/worktrees/NAME/commondir").
func Git(ctx context.Context, dir string, args ...string) (string, error) {
	if len(args) > 0 && args[0] == "worktree" {
		mu, _ := adminLocks.LoadOrStore(filepath.Clean(dir), &sync.Mutex{})
		mu.(*sync.Mutex).Lock()
		defer mu.(*sync.Mutex).Unlock()
	}
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

// Subdir is where dir lies in the repository whose top-level dir is top ("." for top itself,
// or when dir is not inside it), so the same place can be found in a worktree of it.
func Subdir(top, dir string) (string, error) {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(top, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		rel = "."
	}
	return rel, nil
}

// Branch is the branch checked out in the repository at dir, "" for a detached HEAD: where
// work made from its HEAD lands.
func Branch(ctx context.Context, dir string) string {
	br, err := Git(ctx, dir, "symbolic-ref", "--quiet", "--short", "HEAD")
	if err != nil {
		return ""
	}
	return br
}

// Add makes sure the worktree's dir is there: it is made again from the branch when the
// branch is already there (a retry, a run after its worktree was removed), else a new branch
// is made from base (and Base set to it); fresh reports the latter.
func (wt *Worktree) Add(ctx context.Context, base string) (fresh bool, err error) {
	if _, err := os.Stat(wt.Dir); err == nil {
		return false, nil
	}
	Git(ctx, wt.Repo, "worktree", "prune") // Best effort: forget worktrees whose dirs are gone.
	if _, err := Git(ctx, wt.Repo, "rev-parse", "--verify", "refs/heads/"+wt.Branch); err == nil {
		if _, err := Git(ctx, wt.Repo, "worktree", "add", wt.Dir, wt.Branch); err != nil {
			return false, err
		}
		wt.Pruned = false
		return false, nil
	}
	wt.Base = base
	if _, err := Git(ctx, wt.Repo, "worktree", "add", "-b", wt.Branch, wt.Dir, base); err != nil {
		return false, err
	}
	wt.Pruned = false
	return true, nil
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

// BranchLine is a piece of work's branch and diff stat, for its report ("" without one).
func BranchLine(wt *Worktree) string {
	if wt == nil {
		return ""
	}
	stat := wt.DiffStat
	if stat == "" {
		stat = "no changes"
	}
	return fmt.Sprintf("Branch: %s (worktree %s)\n%s", wt.Branch, wt.Dir, stat)
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

// CatchUp merges the target branch into a worktree that has one, re-adding the worktree
// first if it was removed, so work sent back to its agent goes on from what landed
// meanwhile. It returns what the agent must know: the conflicted files, left in the worktree
// for it to resolve.
func (wt *Worktree) CatchUp(ctx context.Context) (string, error) {
	if _, err := wt.Add(ctx, wt.Base); err != nil {
		return "", err
	}
	if wt.Target == "" {
		return "", nil
	}
	target := "refs/heads/" + wt.Target
	if _, err := Git(ctx, wt.Dir, "merge-base", "--is-ancestor", target, "HEAD"); err == nil {
		return "", nil // already on top of it
	}
	if _, err := Git(ctx, wt.Dir, "merge", "--no-edit", "-m", "Merge "+wt.Target+" into "+wt.Branch+" before going on", target); err == nil {
		return fmt.Sprintf("Your branch %s now has the latest %s merged in (what landed meanwhile).", wt.Branch, wt.Target), nil
	}
	files, _ := Git(ctx, wt.Dir, "diff", "--name-only", "--diff-filter=U")
	if files == "" {
		Git(ctx, wt.Dir, "merge", "--abort") // Best effort: not a conflict; leave the worktree as it was.
		return "", fmt.Errorf("merging %s failed for a reason other than a conflict", wt.Target)
	}
	return fmt.Sprintf("Merging the latest %s into your branch conflicts in %s. The merge is in progress in your worktree: resolve the conflict markers in those files (keep both changes' intent), then verify again.",
		wt.Target, strings.Join(strings.Fields(files), ", ")), nil
}

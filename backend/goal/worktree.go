package goal

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/clusterspace/clusterspace/backend/worktree"
)

// finishTimeout bounds committing a goal's work on its branch when it ends: git add and
// commit of a big tree take seconds, and a goal's end must not hang on a stuck git.
const finishTimeout = 2 * time.Minute

// worktreeBranchPrefix starts the branch of a goal run in its own worktree: goal/<goal id>,
// beside the fleet/<fleet id>/<task id> branches of fleet tasks.
const worktreeBranchPrefix = "goal/"

// RepoDir is the directory a goal works in, whose repository a worktree of its own (a goal's
// with --worktree, a fleet task's) is made of: its sandbox, else its work dir.
func (s Spec) RepoDir() string {
	if s.Policy.SandboxDir != "" {
		return s.Policy.SandboxDir
	}
	return s.Settings.WorkDir
}

// worktreeRepo checks that a goal asking for a worktree works in a git repository with a
// commit, and returns its top-level dir and HEAD; a refusal names the field and the dir.
func worktreeRepo(ctx context.Context, spec Spec) (top, head string, err error) {
	dir := spec.RepoDir()
	top, head, err = worktree.RepoHead(ctx, dir)
	if err != nil {
		msg := fmt.Sprintf("%s is not in a git repository with a commit, so the goal has no branch to work on: git init it and commit once, or drop --worktree", dir)
		if spec.Policy.SandboxDir == "" {
			msg += " (with no sandbox dir the goal branches from its work dir; a sandbox dir inside a repository does too)"
		}
		return "", "", &FieldError{"worktree", msg}
	}
	return top, head, nil
}

// outOfWorktree moves the dirs of a spec that worked in a worktree (a goal being run again)
// back to where they are in its repository, so a new worktree is made of the person's
// checkout rather than of the old goal's.
func outOfWorktree(spec Spec) Spec {
	wt := spec.Worktree
	if wt == nil || wt.Dir == "" || wt.Repo == "" {
		return spec
	}
	back := func(dir string) string {
		rel, err := filepath.Rel(wt.Dir, dir)
		if dir == "" || err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return dir
		}
		return filepath.Join(wt.Repo, rel)
	}
	spec.Policy.SandboxDir = back(spec.Policy.SandboxDir)
	spec.Settings.WorkDir = back(spec.Settings.WorkDir)
	return spec
}

// intoWorktree makes goal id's own worktree and branch, goal/<id>, from the HEAD of the
// repository it works in, and moves its sandbox and work dir to the same places in it. The
// branch lands on the branch checked out then.
func intoWorktree(ctx context.Context, id string, spec Spec) (Spec, error) {
	top, head, err := worktreeRepo(ctx, spec)
	if err != nil {
		return spec, err
	}
	common, err := worktree.Git(ctx, top, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return spec, &FieldError{"worktree", "cannot find the git dir of " + top + ": " + err.Error()}
	}
	wt := worktree.Worktree{Repo: top, Dir: filepath.Join(common, worktree.DirName, id), Branch: worktreeBranchPrefix + id,
		Target: worktree.Branch(ctx, top)}
	if _, err := wt.Add(ctx, head); err != nil {
		return spec, &FieldError{"worktree", fmt.Sprintf("making the goal's worktree in %s failed: %v", wt.Dir, err)}
	}
	move := func(dir string) (string, error) {
		rel, err := worktree.Subdir(top, dir)
		if err != nil {
			return "", err
		}
		// A dir git does not track (empty, or ignored) is not in a new worktree: made, so
		// the goal's terminal and check have it to run in.
		moved := filepath.Join(wt.Dir, rel)
		return moved, os.MkdirAll(moved, 0o755)
	}
	if spec.Policy.SandboxDir != "" {
		if spec.Policy.SandboxDir, err = move(spec.Policy.SandboxDir); err != nil {
			removeWorktree(ctx, wt)
			return spec, &FieldError{"policy.sandboxDir", err.Error()}
		}
	}
	if spec.Settings.WorkDir != "" {
		if spec.Settings.WorkDir, err = move(spec.Settings.WorkDir); err != nil {
			removeWorktree(ctx, wt)
			return spec, &FieldError{"settings.workDir", err.Error()}
		}
	}
	wt.WorkDir = spec.RepoDir()
	spec.Worktree = &wt
	return spec, nil
}

// removeWorktree takes back a worktree made for a goal that was then not stored: its dir and
// its branch, which holds nothing yet.
func removeWorktree(ctx context.Context, wt worktree.Worktree) {
	// Best effort: a leftover is an empty branch and a dir inside the git dir.
	worktree.Git(ctx, wt.Repo, "worktree", "remove", "--force", wt.Dir)
	worktree.Git(ctx, wt.Repo, "branch", "-D", wt.Branch)
}

// endWorktree commits what goal g left in its worktree on its branch, and returns its report
// with the branch and diff stat added (as a fleet task's report has them). The worktree's
// new tip and diff stat are stored with the goal's spec.
func endWorktree(g *Goal, report string) string {
	if g.Spec.Worktree == nil || g.Spec.Worktree.Pruned {
		return report
	}
	ctx, cancel := context.WithTimeout(context.Background(), finishTimeout)
	defer cancel()
	wt := *g.Spec.Worktree
	wt.Finish(ctx, fmt.Sprintf("goal %s (%s)\n\n%s", g.ID, g.Status, g.Spec.Goal))
	g.Spec.Worktree = &wt
	return strings.TrimSpace(report + "\n\n" + worktree.BranchLine(&wt))
}

// reAddWorktree makes a resumed or re-opened goal's worktree again from its branch when its
// dir is gone (removed by hand, or after a landing), so it goes on where it left off.
func (r *run) reAddWorktree() error {
	if r.g.Spec.Worktree == nil {
		return nil
	}
	wt := *r.g.Spec.Worktree
	if _, err := wt.Add(r.ctx, wt.Base); err != nil {
		return fmt.Errorf("its worktree %s could not be made again from branch %s: %w", wt.Dir, wt.Branch, err)
	}
	r.g.Spec.Worktree = &wt
	return nil
}

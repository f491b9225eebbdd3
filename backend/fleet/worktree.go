package fleet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/clusterspace/clusterspace/backend/goal"
)

// Limits of worktree isolation.
const (
	// MaxSetup bounds a fleet's setup command in one worktree (npm ci on a cold cache takes
	// minutes; a hung one must not hold a slot forever).
	MaxSetup = 15 * time.Minute
	// maxSetupOutput is how much of a failed setup's output the task's report keeps (the end,
	// where the error is).
	maxSetupOutput = 4000
	// worktreesDir is where a repository's fleet worktrees live, inside its git dir: git
	// ignores it, a confined shell whose sandbox is the repository can reach it, and it goes
	// away with the repository.
	worktreesDir = "clusterspace-worktrees"
)

// Worktree is a task's own git worktree and branch.
type Worktree struct {
	Repo string `json:"repo"` // the repository's top-level dir
	Dir  string `json:"dir"`  // the worktree
	// WorkDir is where the task's goal works: the worktree, or the same subdir of it that
	// the fleet's sandbox is of the repository.
	WorkDir string `json:"workDir"`
	Branch  string `json:"branch"`
	Base    string `json:"base"` // the commit the branch started from
	// Commit is the branch's tip once the task ended (its work committed by the fleet).
	Commit    string `json:"commit,omitempty"`
	DiffStat  string `json:"diffStat,omitempty"` // git diff --stat base...branch
	SetupDone bool   `json:"setupDone,omitempty"`
	Pruned    bool   `json:"pruned,omitempty"` // the worktree was removed; the branch stays
}

// isolated reports whether a task runs in its own worktree. A task handed out with
// assign_task never does: it works in its caller's sandbox, and a worktree of its own would
// lie outside it, widening what the caller may touch.
func isolated(f *Fleet, t *Task) bool {
	if t.AssignedBy != "" {
		return false
	}
	switch t.Isolation {
	case IsolationWorktree:
		return true
	case "none":
		return false
	}
	return f.Spec.Isolation == IsolationWorktree
}

// repoDirOf is the directory a goal works in: its sandbox, else its work dir.
func repoDirOf(spec goal.Spec) string {
	if spec.Policy.SandboxDir != "" {
		return spec.Policy.SandboxDir
	}
	return spec.Settings.WorkDir
}

// gitIdentity signs the commits the fleet makes of a task's work.
var gitIdentity = []string{"GIT_AUTHOR_NAME=ClusterSpace fleet", "GIT_AUTHOR_EMAIL=fleet@clusterspace.invalid",
	"GIT_COMMITTER_NAME=ClusterSpace fleet", "GIT_COMMITTER_EMAIL=fleet@clusterspace.invalid"}

func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), gitIdentity...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return strings.TrimSpace(string(out)), nil
}

// repoHead checks that dir is in a git repository with a commit, and returns the
// repository's top-level dir and its HEAD commit.
func repoHead(ctx context.Context, dir string) (top, head string, err error) {
	if dir == "" {
		return "", "", errors.New("isolation: worktree needs a git repository to work in: give the fleet a sandbox (--sandbox DIR) or a work dir inside one")
	}
	top, err = git(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return "", "", fmt.Errorf("isolation: worktree: %s is not in a git repository (git init it, or drop isolation): %v", dir, err)
	}
	head, err = git(ctx, dir, "rev-parse", "--verify", "HEAD^{commit}")
	if err != nil {
		return "", "", fmt.Errorf("isolation: worktree: the repository at %s has no commit yet; commit once so tasks have a base to branch from", top)
	}
	return top, head, nil
}

// prepareWorktree gives a task its worktree (made, or the one it had) and runs the fleet's
// setup there once. Runs without s.mu: git and setup take time.
func prepareWorktree(ctx context.Context, f *Fleet, t *Task, spec goal.Spec) (*Worktree, error) {
	repoDir := repoDirOf(spec)
	top, head, err := repoHead(ctx, repoDir)
	if err != nil {
		return nil, err
	}
	realDir, err := filepath.EvalSymlinks(repoDir)
	if err != nil {
		return nil, err
	}
	rel, err := filepath.Rel(top, realDir)
	if err != nil || strings.HasPrefix(rel, "..") {
		rel = "."
	}
	var wt Worktree
	if t.Worktree != nil {
		wt = *t.Worktree
	} else {
		common, err := git(ctx, top, "rev-parse", "--path-format=absolute", "--git-common-dir")
		if err != nil {
			return nil, err
		}
		wt = Worktree{Repo: top, Dir: filepath.Join(common, worktreesDir, f.ID, t.ID), Branch: "fleet/" + f.ID + "/" + t.ID}
	}
	if _, err := os.Stat(wt.Dir); err != nil {
		git(ctx, top, "worktree", "prune") // Best effort: forget worktrees whose dirs are gone.
		if _, err := git(ctx, top, "rev-parse", "--verify", "refs/heads/"+wt.Branch); err == nil {
			// The branch is there from an earlier run (a retry, a prune): go on from it.
			if _, err := git(ctx, top, "worktree", "add", wt.Dir, wt.Branch); err != nil {
				return nil, err
			}
		} else {
			base, merges := baseOf(f, t, head)
			wt.Base = base
			if _, err := git(ctx, top, "worktree", "add", "-b", wt.Branch, wt.Dir, base); err != nil {
				return nil, err
			}
			for _, m := range merges {
				if err := mergeDependency(ctx, &wt, m); err != nil {
					return &wt, err
				}
			}
		}
	}
	if wt.Base == "" {
		// A worktree made by a run that ended before it was recorded (the app was killed
		// during setup) or a branch kept from an earlier run: its base is where the branch
		// left what it starts from, so its report counts only the task's own changes.
		from, _ := baseOf(f, t, head)
		if mb, err := git(ctx, top, "merge-base", from, "refs/heads/"+wt.Branch); err == nil {
			wt.Base = mb
		}
	}
	wt.WorkDir = filepath.Join(wt.Dir, rel)
	if f.Spec.Setup != "" && !wt.SetupDone {
		if err := runSetup(ctx, wt, f.Spec.Setup); err != nil {
			return &wt, err
		}
		wt.SetupDone = true
	}
	return &wt, nil
}

// mergeDependency merges the branch of a further task a fan-in task depends on into its new
// worktree. A conflict is reported naming its files, and the merge is aborted: the worktree
// is never left half-merged.
func mergeDependency(ctx context.Context, wt *Worktree, branch string) error {
	_, err := git(ctx, wt.Dir, "merge", "--no-edit", branch)
	if err == nil {
		return nil
	}
	files, _ := git(ctx, wt.Dir, "diff", "--name-only", "--diff-filter=U")
	if _, abortErr := git(ctx, wt.Dir, "merge", "--abort"); abortErr != nil {
		err = errors.Join(err, abortErr)
	}
	if files != "" {
		return fmt.Errorf("the work of the tasks it depends on conflicts: merging branch %s into %s conflicts in %s. The merge was aborted; make those tasks change different files (or have one depend on the other), or merge the branches by hand and retry the task",
			branch, wt.Branch, strings.Join(strings.Fields(files), ", "))
	}
	return fmt.Errorf("merging the work of the tasks it depends on (branch %s) into %s failed, and was aborted: %v", branch, wt.Branch, err)
}

// baseOf is the commit a task's branch starts from: the tip of the first task it depends
// on that worked in a worktree (so a test task sees what its build task made), else the
// fleet's base; the other dependencies' branches are merged in after.
func baseOf(f *Fleet, t *Task, head string) (base string, merges []string) {
	for _, d := range t.DependsOn {
		dt, ok := f.Task(d)
		if !ok || dt.Worktree == nil || dt.Worktree.Commit == "" {
			continue
		}
		if base == "" {
			base = dt.Worktree.Commit
		} else {
			merges = append(merges, dt.Worktree.Branch)
		}
	}
	if base == "" {
		base = f.Spec.Base
	}
	if base == "" {
		base = head
	}
	return base, merges
}

// finishWorktree commits what the task left in its worktree on its branch (so nothing is
// lost when the worktree is pruned) and records the branch's tip and diff stat.
func finishWorktree(ctx context.Context, f *Fleet, t *Task, wt *Worktree) {
	if wt == nil || wt.Pruned {
		return
	}
	if _, err := git(ctx, wt.Dir, append([]string{"add", "-A", "--", "."}, setupExcludes(ctx, wt)...)...); err == nil {
		if st, _ := git(ctx, wt.Dir, "status", "--porcelain"); st != "" {
			msg := fmt.Sprintf("fleet %s: task %s (%s)\n\n%s", f.Name, t.ID, t.Status, t.Goal)
			git(ctx, wt.Dir, "commit", "-q", "--no-verify", "-m", msg) // Best effort: the diff stat below shows what got in.
		}
	}
	if c, err := git(ctx, wt.Dir, "rev-parse", "HEAD"); err == nil {
		wt.Commit = c
	}
	if wt.Base != "" {
		stat, err := git(ctx, wt.Dir, "diff", "--stat", wt.Base+"..."+wt.Branch)
		if err != nil {
			stat = "(no diff stat: " + err.Error() + ")"
		}
		wt.DiffStat = stat
	}
}

// branchLine is a task's branch and diff stat, for its report.
func branchLine(wt *Worktree) string {
	if wt == nil {
		return ""
	}
	stat := wt.DiffStat
	if stat == "" {
		stat = "no changes"
	}
	return fmt.Sprintf("Branch: %s (worktree %s)\n%s", wt.Branch, wt.Dir, stat)
}

// Prune removes the worktrees of a fleet's tasks; their branches, with the work committed,
// stay. It is refused while a task of the fleet runs.
func (s *Service) Prune(ctx context.Context, id string) (Fleet, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var f Fleet
	l, active := s.active[id]
	if active {
		f = l.f
	} else {
		var err error
		if f, err = s.repo.Fleet(ctx, id); err != nil {
			return Fleet{}, err
		}
	}
	for _, t := range f.Tasks {
		// A waiting task of a driven fleet gets (or has) its worktree any moment.
		if t.Status == TaskRunning || (active && t.Status == TaskWaiting && isolated(&f, &t)) {
			return Fleet{}, fmt.Errorf("task %s of fleet %s is running in its worktree, or about to; prune after the fleet ends (or abort it first)", t.ID, id)
		}
	}
	f.Tasks = cloneTasks(f.Tasks)
	var errs []error
	for i := range f.Tasks {
		wt := f.Tasks[i].Worktree
		if wt == nil || wt.Pruned {
			continue
		}
		if _, err := os.Stat(wt.Dir); err == nil {
			if _, err := git(ctx, wt.Repo, "worktree", "remove", "--force", wt.Dir); err != nil {
				errs = append(errs, fmt.Errorf("task %s: %w", f.Tasks[i].ID, err))
				continue
			}
		}
		// Best effort: the fleet's dir goes when its last worktree did.
		os.Remove(filepath.Dir(wt.Dir))
		w := *wt
		w.Pruned, w.SetupDone = true, false
		f.Tasks[i].Worktree = &w
	}
	if active {
		l.f.Tasks = f.Tasks
	}
	if err := s.save(ctx, &f); err != nil {
		return Fleet{}, err
	}
	return f, errors.Join(errs...)
}

// cloneTasks copies tasks with their worktrees, so a copy can change apart.
func cloneTasks(ts []Task) []Task {
	out := make([]Task, len(ts))
	copy(out, ts)
	for i := range out {
		if out[i].Worktree != nil {
			w := *out[i].Worktree
			out[i].Worktree = &w
		}
	}
	return out
}

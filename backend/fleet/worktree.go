package fleet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/worktree"
)

// Worktree is a task's own git worktree and branch.
type Worktree = worktree.Worktree

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
func repoDirOf(spec goal.Spec) string { return spec.RepoDir() }

// prepareWorktree gives a task its worktree (made, or the one it had) and runs the fleet's
// setup there once. Runs without s.mu: git and setup take time.
func (s *Service) prepareWorktree(ctx context.Context, f *Fleet, t *Task, spec goal.Spec) (*Worktree, error) {
	repoDir := repoDirOf(spec)
	top, head, err := worktree.RepoHead(ctx, repoDir)
	if err != nil {
		return nil, err
	}
	rel, err := worktree.Subdir(top, repoDir)
	if err != nil {
		return nil, err
	}
	var wt Worktree
	if t.Worktree != nil {
		wt = *t.Worktree
	} else {
		common, err := worktree.Git(ctx, top, "rev-parse", "--path-format=absolute", "--git-common-dir")
		if err != nil {
			return nil, err
		}
		wt = Worktree{Repo: top, Dir: filepath.Join(common, worktree.DirName, f.ID, t.ID), Branch: "fleet/" + f.ID + "/" + t.ID, Target: f.Spec.Target}
	}
	// A branch there from an earlier run (a retry, a prune) is gone on from; a new one starts
	// from the task's base, with its other dependencies merged in.
	base, merges := baseOf(f, t, head)
	if fresh, err := wt.Add(ctx, base); err != nil {
		return nil, err
	} else if fresh {
		for _, m := range merges {
			if err := worktree.MergeDependency(ctx, &wt, m); err != nil {
				return &wt, err
			}
		}
	}
	if wt.Base == "" {
		// A worktree made by a run that ended before it was recorded (the app was killed
		// during setup) or a branch kept from an earlier run: its base is where the branch
		// left what it starts from, so its report counts only the task's own changes.
		from, _ := baseOf(f, t, head)
		if mb, err := worktree.Git(ctx, top, "merge-base", from, "refs/heads/"+wt.Branch); err == nil {
			wt.Base = mb
		}
	}
	wt.WorkDir = filepath.Join(wt.Dir, rel)
	if err := s.giveRunEnv(ctx, f, t, &wt); err != nil {
		return &wt, err
	}
	if f.Spec.Setup != "" && !wt.SetupDone {
		if err := worktree.RunSetup(ctx, wt, f.Spec.Setup); err != nil {
			return &wt, err
		}
		wt.SetupDone = true
	}
	return &wt, nil
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
	wt.Finish(ctx, fmt.Sprintf("fleet %s: task %s (%s)\n\n%s", f.Name, t.ID, t.Status, t.Goal))
}

// branchLine is a task's branch and diff stat, for its report.
func branchLine(wt *Worktree) string { return worktree.BranchLine(wt) }

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
			if _, err := worktree.Git(ctx, wt.Repo, "worktree", "remove", "--force", wt.Dir); err != nil {
				errs = append(errs, fmt.Errorf("task %s: %w", f.Tasks[i].ID, err))
				continue
			}
		}
		if err := s.releaseRunEnv(f.ID, f.Tasks[i].ID, wt); err != nil {
			errs = append(errs, fmt.Errorf("task %s: %w", f.Tasks[i].ID, err))
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
		if out[i].Review != nil {
			r := *out[i].Review
			r.Story = append([]StoryNote(nil), r.Story...)
			out[i].Review = &r
		}
	}
	return out
}

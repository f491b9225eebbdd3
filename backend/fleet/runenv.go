package fleet

import (
	"context"
	"fmt"
	"slices"

	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/worktree"
)

// What an isolated task runs with besides its worktree, so two tasks can start the same dev
// server or database at once: its own range of ports (PORT), its own scratch and cache dirs
// (TMPDIR, XDG_CACHE_HOME), and copies of the person's untracked files (`copy:`).

// portOwner names a task's port range in the Service's pool.
func portOwner(fleetID, taskID string) string { return fleetID + "/" + taskID }

// giveRunEnv gives a task's worktree its ports, its scratch dir and the files `copy:` lists,
// before its setup runs. A resumed task keeps the range on its record. Runs without s.mu.
func (s *Service) giveRunEnv(ctx context.Context, f *Fleet, t *Task, wt *Worktree) error {
	s.mu.Lock()
	live := s.liveTasks()
	s.mu.Unlock()
	// Ranges of tasks that ended are given back now, when one is asked for; the ranges of
	// tasks that run on after a restart (their goals resumed, their shells on their PORT) are
	// taken again first, so no new task gets one.
	s.ports.Retain(func(owner string) bool { _, ok := live[owner]; return ok })
	me := portOwner(f.ID, t.ID)
	for owner, base := range live {
		if base > 0 && owner != me {
			s.ports.Reserve(owner, base) // Best effort: it keeps its range even if another process holds it.
		}
	}
	base, err := s.ports.Reserve(me, wt.PortBase)
	if err != nil {
		return err
	}
	wt.PortBase, wt.PortCount = base, worktree.PortsPerRange
	if wt.Scratch == "" {
		wt.Scratch = worktree.ScratchDirOf(wt.Dir)
	}
	if err := wt.MakeScratch(); err != nil {
		return err
	}
	return wt.CopyIn(ctx, wt.Repo, f.Spec.Copy)
}

// liveTasks are the tasks of the fleets this process drives that have not ended, by port
// owner, with the first port on their record (0: none yet): their ranges stay theirs.
// Called with s.mu held.
func (s *Service) liveTasks() map[string]int {
	live := map[string]int{}
	for id, l := range s.active {
		for _, t := range l.f.Tasks {
			if t.Status.Ended() {
				continue
			}
			live[portOwner(id, t.ID)] = 0
			if t.Worktree != nil && !t.Worktree.Pruned {
				live[portOwner(id, t.ID)] = t.Worktree.PortBase
			}
		}
	}
	return live
}

// worktreeReady reports whether an isolated task can start in its worktree now: it is
// there, set up, and its port range is held by this process (after a restart it is taken
// again, through prepare). Called with s.mu held.
func (s *Service) worktreeReady(f *Fleet, t *Task) bool {
	wt := t.Worktree
	return wt != nil && !wt.Pruned && dirExists(wt.Dir) && (wt.SetupDone || f.Spec.Setup == "") &&
		s.ports.Holds(portOwner(f.ID, t.ID))
}

// withWorktreeEnv gives a task's goal its worktree's environment: its shell, its check and
// its setup see the same PORT and scratch dirs.
func withWorktreeEnv(spec *goal.Spec, wt *Worktree) {
	if env := wt.Env(); len(env) > 0 {
		spec.Settings.Env = append(slices.Clip(spec.Settings.Env), env...)
	}
	spec.Settings.ScratchDir = wt.Scratch
}

// runEnvLine tells a task's agent about its ports, for its first prompt.
func runEnvLine(wt *Worktree) string {
	if wt.PortBase == 0 {
		return ""
	}
	return fmt.Sprintf("Ports %d to %d are yours alone: start servers on $PORT (%d; the range is $%s and $%s), never on a fixed port, as other tasks run the same servers at once. Your temporary files and caches go to $TMPDIR and $XDG_CACHE_HOME, your own.\n\n",
		wt.PortBase, wt.PortBase+wt.PortCount-1, wt.PortBase, worktree.EnvPortBase, worktree.EnvPortCount)
}

// releaseRunEnv gives back a pruned task's ports and removes its scratch dir.
func (s *Service) releaseRunEnv(fleetID, taskID string, wt *Worktree) error {
	s.ports.Release(portOwner(fleetID, taskID))
	return wt.RemoveScratch()
}

package fleet

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/clusterspace/clusterspace/backend/goal"
)

// Resume goes on with an interrupted fleet: verified tasks stay done, tasks whose goal was
// cut off resume that goal with its conversation, and the goals still queued go on waiting
// their turn (the Goal Runner kept them queued, held until the fleet is driven again).
func (s *Service) Resume(ctx context.Context, id string) (Fleet, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l, ok := s.active[id]; ok {
		return l.f, nil
	}
	f, err := s.repo.Fleet(ctx, id)
	if err != nil {
		return Fleet{}, err
	}
	if f.Status != StatusInterrupted && f.Status != StatusRunning {
		return Fleet{}, fmt.Errorf("fleet %s has ended (%s); only an interrupted fleet resumes", id, f.Status)
	}
	if err := s.ensurePanes(ctx, f, f.Tasks); err != nil {
		return Fleet{}, err
	}
	f.Status = StatusRunning
	l := &live{f: f, done: make(chan struct{})}
	s.active[id] = l
	for i := range l.f.Tasks {
		t := &l.f.Tasks[i]
		if t.Status.Ended() {
			continue
		}
		if t.GoalID == "" {
			// Waiting for its dependencies or its worktree: it is handed over in its turn.
			t.Status, t.StartedAt = TaskWaiting, nil
			continue
		}
		g, err := s.goals.Get(ctx, t.GoalID)
		now := time.Now().UTC()
		switch {
		case err == nil && g.Status.Finished() && t.Review != nil && t.Review.Feedback != "":
			// Sent back to its agent (a review, a refused landing) by a door that does not
			// drive the fleet: its goal goes on now, with that feedback.
			if err := s.reopenGoal(ctx, l, t); err != nil {
				t.Status, t.Report, t.EndedAt = TaskFailed, err.Error(), &now
				break
			}
			continue
		case err != nil:
			t.Status, t.Report, t.EndedAt = TaskFailed, "its goal is gone: "+err.Error(), &now
		case g.Status.Finished():
			// It ended after the last save: record it as the watcher would have.
			if g.StartedAt == nil && g.Status == goal.StatusAborted {
				// Withdrawn before it ran; schedule blocks it if a dependency failed.
				t.GoalID, t.StartedAt = "", nil
				continue
			}
			t.Report, t.EndedAt, t.Status = s.report(g), &now, taskStatusOf(g)
			if t.Worktree != nil {
				w := *t.Worktree
				finishWorktree(ctx, &l.f, t, &w)
				t.Worktree = &w
				t.Report += "\n" + branchLine(&w)
			}
		case g.Status == goal.StatusPending:
			t.Status, t.StartedAt = TaskWaiting, nil // still queued: it runs in its turn
			s.watch(id, t.ID, g.ID)
			continue
		default:
			if err := s.goals.Resume(ctx, g.ID); err != nil {
				t.Status, t.Report, t.EndedAt = TaskFailed, "its goal could not resume: "+err.Error(), &now
			} else {
				if t.Status != TaskRunning || t.StartedAt == nil {
					t.StartedAt = &now
				}
				t.Status = TaskRunning
				s.watch(id, t.ID, g.ID)
				continue
			}
		}
		s.publishTask(&l.f, t)
	}
	s.drive(l)
	s.publishFleet(&l.f)
	s.schedule(l)
	return l.f, nil
}

// Abort ends a fleet: its running goals are aborted, its waiting tasks will not start.
func (s *Service) Abort(ctx context.Context, id string) error {
	s.mu.Lock()
	l, ok := s.active[id]
	var f Fleet
	if ok {
		l.aborting = true
		f = l.f
		for key, cancel := range s.preparing {
			if strings.HasPrefix(key, id+"/") {
				cancel()
			}
		}
	}
	// None of its queued goals starts from now on; the loop below aborts them.
	s.goals.CloseGroup(id)
	s.mu.Unlock()
	if !ok {
		stored, err := s.repo.Fleet(ctx, id)
		if err != nil {
			return err
		}
		if stored.Status.Finished() {
			return fmt.Errorf("fleet %s has already ended (%s)", id, stored.Status)
		}
		f = stored
	}
	for _, t := range f.Tasks {
		if !t.Status.Ended() && t.GoalID != "" { // running, or queued
			if g, err := s.goals.Get(ctx, t.GoalID); err == nil && !g.Status.Finished() {
				if err := s.goals.Abort(ctx, t.GoalID); err != nil {
					s.log.Warn("fleet: abort a task's goal", "fleet", id, "goal", t.GoalID, "err", err)
				}
			}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if l != nil {
		f = l.f
	}
	now := time.Now().UTC()
	for i := range f.Tasks {
		t := &f.Tasks[i]
		if t.Status == TaskWaiting || t.Status == TaskRunning {
			t.Status, t.EndedAt = TaskAborted, &now
			if t.Report == "" {
				t.Report = "The fleet was aborted."
			}
			s.publishTask(&f, t)
		}
	}
	f.Status = StatusAborted
	if err := s.save(ctx, &f); err != nil {
		return err
	}
	s.publishFleet(&f)
	if l != nil {
		l.f = f
		delete(s.active, id)
		close(l.done)
	}
	return nil
}

// Wait blocks until the fleet ends (or is no longer driven by this process) and returns it.
func (s *Service) Wait(ctx context.Context, id string) (Fleet, error) {
	s.mu.Lock()
	l, ok := s.active[id]
	s.mu.Unlock()
	if ok {
		select {
		case <-l.done:
		case <-ctx.Done():
			return Fleet{}, ctx.Err()
		}
	}
	return s.repo.Fleet(ctx, id)
}

// Get returns a fleet as it is now.
func (s *Service) Get(ctx context.Context, id string) (Fleet, error) {
	s.mu.Lock()
	if l, ok := s.active[id]; ok {
		f := l.f
		f.Tasks = cloneTasks(f.Tasks)
		s.mu.Unlock()
		return f, nil
	}
	s.mu.Unlock()
	return s.repo.Fleet(ctx, id)
}

// List returns every fleet, newest first.
func (s *Service) List(ctx context.Context) ([]Fleet, error) {
	fs, err := s.repo.ListFleets(ctx)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range fs {
		if l, ok := s.active[fs[i].ID]; ok {
			fs[i] = l.f
			fs[i].Tasks = cloneTasks(l.f.Tasks)
		}
	}
	return fs, nil
}

// Shutdown stops following the goals (the Goal Runner interrupts them); the running fleets
// are stored as interrupted, for Resume after a restart.
func (s *Service) Shutdown() {
	// The Goal Runner starts none of their queued tasks once nobody follows them: those wait,
	// held, until the fleet resumes.
	s.mu.Lock()
	for id := range s.active {
		s.goals.CloseGroup(id)
	}
	s.mu.Unlock()
	s.cancel()
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, l := range s.active {
		l.f.Status = StatusInterrupted
		if err := s.save(context.Background(), &l.f); err != nil {
			s.log.Error("fleet: save at shutdown", "fleet", id, "err", err)
		}
		delete(s.active, id)
		close(l.done)
	}
	s.ports.Retain(func(string) bool { return false }) // a reopened app takes them again
}

// Retry runs a failed, aborted or blocked task again: it and the tasks blocked behind it
// wait again (their reasons cleared), and a fleet that had ended runs again.
func (s *Service) Retry(ctx context.Context, fleetID, taskID string) (Fleet, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, active, err := s.liveOrStored(ctx, fleetID)
	if err != nil {
		return Fleet{}, err
	}
	if !active && l.f.Status == StatusInterrupted {
		return Fleet{}, fmt.Errorf("fleet %s is interrupted: resume it first", fleetID)
	}
	t, ok := l.f.Task(taskID)
	if !ok {
		return Fleet{}, fmt.Errorf("fleet %s has no task %q", fleetID, taskID)
	}
	if t.Status != TaskFailed && t.Status != TaskAborted && t.Status != TaskBlocked {
		return Fleet{}, fmt.Errorf("task %s is %s; only a failed, aborted or blocked task is retried", taskID, t.Status)
	}
	reset := map[string]bool{taskID: true}
	for changed := true; changed; { // and what is blocked behind it
		changed = false
		for _, d := range l.f.Tasks {
			if d.Status == TaskBlocked && !reset[d.ID] && slices.ContainsFunc(d.DependsOn, func(id string) bool { return reset[id] }) {
				reset[d.ID], changed = true, true
			}
		}
	}
	for _, rt := range l.f.Tasks {
		for _, d := range rt.DependsOn {
			if dt, _ := l.f.Task(d); reset[rt.ID] && !reset[d] && dt.Status != TaskCompleted && dt.Status.Ended() {
				return Fleet{}, fmt.Errorf("task %s depends on task %s, which %s: retry %s", rt.ID, d, dt.Status, d)
			}
		}
	}
	for i := range l.f.Tasks {
		t := &l.f.Tasks[i]
		if reset[t.ID] {
			// An isolated task keeps its worktree and branch: the retry goes on from its work.
			t.Status, t.Reason, t.Report, t.GoalID, t.StartedAt, t.EndedAt = TaskWaiting, "", "", "", nil, nil
			t.StartsPast = nil
			s.publishTask(&l.f, t)
		}
	}
	return s.runOn(l, true), nil
}

// runOn schedules a fleet's waiting tasks after a retry or a re-open; restart sets a fleet
// that had ended (or is not driven) running again first. Called with s.mu held.
func (s *Service) runOn(l *live, restart bool) Fleet {
	if restart {
		l.aborting = false
		l.f.Status = StatusRunning
		s.drive(l)
	}
	s.publishFleet(&l.f)
	s.schedule(l)
	return l.f
}

// schedStats adds up the time the scheduler spends with s.mu held, from a task's end (or
// the fleet's creation) to the next tasks started: the queue, the store writes, the handoff,
// and the Goal Runner's Start of each task's goal (kept apart in goalStart: a lone goal pays
// it too). The benchmark divides them by the tasks run.
type schedStats struct{ nanos, goalStart atomic.Int64 }

func (st *schedStats) add(began time.Time) { st.nanos.Add(int64(time.Since(began))) }

// SchedulerTime is the time the scheduler has spent so far: its own (everything but the
// goals' creation) and the Goal Runner's Start of the tasks' goals.
func (s *Service) SchedulerTime() (own, goalStart time.Duration) {
	gs := s.stats.goalStart.Load()
	return time.Duration(s.stats.nanos.Load() - gs), time.Duration(gs)
}

// ResumeInterrupted resumes every interrupted fleet (see Resume) and returns their ids; a
// fleet that cannot resume is logged and left interrupted for `fleet resume`.
func (s *Service) ResumeInterrupted(ctx context.Context) ([]string, error) {
	fs, err := s.repo.ListFleets(ctx)
	if err != nil {
		return nil, err
	}
	var ids []string
	for i := len(fs) - 1; i >= 0; i-- { // oldest first: it was queued first
		if fs[i].Status != StatusInterrupted {
			continue
		}
		if _, err := s.Resume(ctx, fs[i].ID); err != nil {
			s.log.Warn("fleet: resume after a restart", "fleet", fs[i].ID, "err", err)
			continue
		}
		ids = append(ids, fs[i].ID)
	}
	return ids, nil
}

package fleet

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/clusterspace/clusterspace/backend/goal"
)

// How a fleet's tasks run. The fleet does not schedule: it hands each task to the Goal
// Runner as a goal of the fleet's group (the fleet's concurrency is the group's limit, the
// task's priority and dependencies the goal's), and the Goal Runner alone decides when it
// starts. A task is waiting until its goal runs, running while it does, and ends as its goal
// ends; a task whose dependency failed is blocked and its queued goal withdrawn.

// recordWait bounds how long a task's goal, about to launch or withdrawn, waits for the
// end of a dependency to be recorded by the fleet (its report, and the commit of its
// worktree): a goal ends a moment before its watcher has written that down.
const recordWait = 30 * time.Second

// owner is the fleet's part in the scheduling of its tasks' goals.
func (s *Service) owner() goal.GroupOwner {
	return goal.GroupOwner{Briefing: s.briefing, Launched: s.launched}
}

// drive makes the fleet one this process drives: its tasks' goals may start. Called with
// s.mu held.
func (s *Service) drive(l *live) {
	s.active[l.f.ID] = l
	s.goals.OpenGroup(l.f.ID, s.owner())
}

// schedule blocks the dependants of failed tasks, hands every task that can go to the Goal
// Runner, and ends the fleet when nothing is left to run. Called with s.mu held.
func (s *Service) schedule(l *live) {
	if s.ctx.Err() != nil || l.aborting || l.f.Status != StatusRunning {
		return
	}
	f := &l.f
	s.propagateBlocks(f)
	s.submitReady(l)
	s.propagateBlocks(f) // a task that could not be handed over blocks its dependants too
	ended := true
	for _, t := range f.Tasks {
		if !t.Status.Ended() {
			ended = false
		}
	}
	if ended {
		f.Status = StatusCompleted
		for _, t := range f.Tasks {
			if t.Status != TaskCompleted {
				f.Status = StatusFailed
			}
		}
	}
	if err := s.save(s.ctx, f); err != nil {
		s.log.Error("fleet: save", "fleet", f.ID, "err", err)
	}
	if ended {
		s.publishFleet(f)
		delete(s.active, f.ID)
		s.goals.CloseGroup(f.ID)
		close(l.done)
	}
}

// submitReady hands the Goal Runner each waiting task whose dependencies it can name: every
// one completed or handed over itself (so the goal waits for their goals). An isolated task
// first gets its worktree, which starts from its dependencies' work, so only once they
// completed; at most the fleet's concurrency of worktrees are prepared at once (git and the
// setup command are heavy). Tasks go in the order they should start, the highest priority
// first, then by their place in the file: the Goal Runner picks a goal as soon as it is
// queued if there is room, so the first handed over is the first to run.
// Called with s.mu held.
func (s *Service) submitReady(l *live) {
	f := &l.f
	order := make([]*Task, len(f.Tasks))
	for i := range f.Tasks {
		order[i] = &f.Tasks[i]
	}
	slices.SortStableFunc(order, func(a, b *Task) int { return b.Priority - a.Priority })
	for changed := true; changed && s.ctx.Err() == nil; {
		changed = false
		for _, t := range order {
			if t.Status != TaskWaiting || t.GoalID != "" {
				continue
			}
			if _, busy := s.preparing[f.ID+"/"+t.ID]; busy {
				continue
			}
			if isolated(f, t) && !s.worktreeReady(f, t) {
				if depsCompleted(f, t) && s.preparations(f.ID) < f.Spec.Concurrency {
					s.prepare(l, t)
				}
				continue
			}
			deps, ok := goalDeps(f, t)
			if !ok {
				continue
			}
			s.submit(f, t, deps)
			changed = true
		}
	}
}

// goalDeps are the goals a task's goal waits for: those of its dependencies not completed
// yet. ok is false while one of them has no goal yet (its worktree is being prepared) or
// ended otherwise (propagateBlocks blocks the task).
func goalDeps(f *Fleet, t *Task) (ids []string, ok bool) {
	for _, d := range t.DependsOn {
		dt, found := f.Task(d)
		switch {
		case !found || slices.Contains(t.StartsPast, d) || dt.Status == TaskCompleted:
		case dt.GoalID != "" && !dt.Status.Ended():
			ids = append(ids, dt.GoalID)
		default:
			return nil, false
		}
	}
	return ids, true
}

// depsCompleted reports whether every dependency the task waits for verified complete.
func depsCompleted(f *Fleet, t *Task) bool {
	for _, d := range t.DependsOn {
		if dt, ok := f.Task(d); ok && !slices.Contains(t.StartsPast, d) && dt.Status != TaskCompleted {
			return false
		}
	}
	return true
}

// preparations counts the fleet's worktrees being prepared. Called with s.mu held.
func (s *Service) preparations(fleetID string) int {
	n := 0
	for key := range s.preparing {
		if strings.HasPrefix(key, fleetID+"/") {
			n++
		}
	}
	return n
}

// submit queues a task's goal with the Goal Runner; the task stays waiting until the goal
// runs (launched tells). Its first prompt's hand-off is built as it launches (briefing).
// Called with s.mu held.
func (s *Service) submit(f *Fleet, t *Task, deps []string) {
	spec := s.goalSpec(f, t, "")
	spec.DependsOn, spec.Priority, spec.Group, spec.GroupLimit = deps, t.Priority, f.ID, f.Spec.Concurrency
	began := time.Now()
	g, err := s.goals.Start(s.ctx, spec)
	s.stats.goalStart.Add(int64(time.Since(began)))
	if err != nil {
		now := time.Now().UTC()
		t.Status, t.Report, t.EndedAt = TaskFailed, "Could not start: "+err.Error(), &now
		s.publishTask(f, t)
		return
	}
	t.GoalID = g.ID
	s.publishTask(f, t) // still waiting, now with the goal it waits as
	s.watch(f.ID, t.ID, g.ID)
}

// prepare gives an isolated task its worktree in the background, then hands it over.
// Called with s.mu held.
func (s *Service) prepare(l *live, t *Task) {
	f := &l.f
	key := f.ID + "/" + t.ID
	ctx, cancel := context.WithCancel(s.ctx)
	s.preparing[key] = cancel
	snap, task, spec := *f, *t, s.goalSpec(f, t, "")
	snap.Tasks = cloneTasks(f.Tasks)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer cancel()
		wt, err := s.prepareWorktree(ctx, &snap, &task, spec)
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.preparing, key)
		if s.ctx.Err() != nil {
			return // stopping: resume prepares it again
		}
		cur, ok := s.active[snap.ID]
		t, found := l.f.Task(task.ID)
		if found && wt != nil {
			t.Worktree = wt // even if aborted meanwhile: prune must find it
		}
		if !ok || cur != l || !found || t.Status != TaskWaiting || t.GoalID != "" {
			if found && wt != nil && !ok {
				s.save(s.ctx, &l.f) // Best effort: the fleet ended meanwhile; keep the worktree on record.
			}
			return // aborted or retried meanwhile
		}
		if err != nil {
			end := time.Now().UTC()
			t.Status, t.Report, t.EndedAt = TaskFailed, "Its worktree could not be prepared: "+err.Error(), &end
			s.publishTask(&l.f, t)
		}
		s.schedule(l) // hands it over now that its worktree is ready
	}()
}

// propagateBlocks marks blocked every waiting task with a dependency that failed, was
// aborted or is blocked itself, naming it: transitively, until nothing changes. A blocked
// task's queued goal never ran: it is withdrawn, and the task no longer names it.
func (s *Service) propagateBlocks(f *Fleet) {
	var withdrawn []string
	for changed := true; changed; {
		changed = false
		for i := range f.Tasks {
			t := &f.Tasks[i]
			if t.Status != TaskWaiting {
				continue
			}
			for _, d := range t.DependsOn {
				dt, ok := f.Task(d)
				if !ok || slices.Contains(t.StartsPast, d) {
					continue
				}
				switch dt.Status {
				case TaskFailed, TaskAborted:
					t.Reason = fmt.Sprintf("task %s, which it depends on, %s: %s", dt.ID, dt.Status, firstLine(dt.Report))
				case TaskBlocked:
					t.Reason = fmt.Sprintf("task %s, which it depends on, is blocked (%s)", dt.ID, dt.Reason)
				default:
					continue
				}
				now := time.Now().UTC()
				t.Status, t.EndedAt, changed = TaskBlocked, &now, true
				if t.GoalID != "" {
					withdrawn = append(withdrawn, t.GoalID)
					t.GoalID = ""
				}
				s.publishTask(f, t)
				break
			}
		}
	}
	s.withdraw(withdrawn, true)
}

// withdraw takes the goals of tasks that will not run out of the Goal Runner's queue, on a
// goroutine of its own: a goal that launched meanwhile is aborted, and Abort waits for its
// end, which must never happen under s.mu. forget: the task no longer names the goal, and a
// goal that never ran is deleted too, so the Goal Dashboard lists only goals that ran.
func (s *Service) withdraw(ids []string, forget bool) {
	if len(ids) == 0 || s.ctx.Err() != nil {
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for _, id := range ids {
			if g, err := s.goals.Get(s.ctx, id); err == nil && !g.Status.Finished() {
				s.goals.Abort(s.ctx, id) // Best effort: it may have ended meanwhile.
			}
			if g, err := s.goals.Get(s.ctx, id); forget && err == nil && g.Status.Finished() && g.StartedAt == nil {
				s.goals.Delete(s.ctx, id) // Best effort: an aborted goal that never ran only clutters the list.
			}
		}
	}()
}

// watch follows a task's goal through the queue to its end.
func (s *Service) watch(fleetID, taskID, goalID string) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if s.goals.WaitQueued(s.ctx, goalID) != nil {
			return // stopping
		}
		g, err := s.goals.Wait(s.ctx, goalID)
		if s.ctx.Err() != nil {
			return
		}
		if err != nil {
			g = goal.Goal{ID: goalID, Status: goal.StatusFailed, Report: "its goal is gone: " + err.Error()}
		}
		if !g.Status.Finished() {
			return // interrupted: the app is stopping; resume picks it up
		}
		if g.StartedAt == nil && g.Status == goal.StatusAborted {
			// Withdrawn before it ran: a dependency's end tells why, once it is recorded.
			s.awaitRecorded(s.ctx, fleetID, taskID)
		}
		s.taskEnded(fleetID, taskID, g, s.finishTask(fleetID, taskID, g))
	}()
}

// awaitRecorded waits, up to recordWait, until the fleet has recorded the end of every
// goal of its other running tasks and of the task's dependencies that ended: a goal ends a moment
// before its watcher writes that down. Then a dependency's report (and branch) is the
// fleet's to hand on and its failure the fleet's to block on, and a task that starts in a
// slot another one left never shows running beside it.
func (s *Service) awaitRecorded(ctx context.Context, fleetID, taskID string) {
	deadline := time.NewTimer(recordWait)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		var goals []string
		if l, ok := s.active[fleetID]; ok {
			t, _ := l.f.Task(taskID)
			for _, x := range l.f.Tasks {
				dep := t != nil && slices.Contains(t.DependsOn, x.ID)
				if x.ID != taskID && x.GoalID != "" && (x.Status == TaskRunning || (dep && !x.Status.Ended())) {
					goals = append(goals, x.GoalID)
				}
			}
		}
		recorded := s.recorded
		s.mu.Unlock()
		unrecorded := false
		for _, id := range goals {
			if g, err := s.goals.Get(ctx, id); err != nil || g.Status.Finished() {
				unrecorded = true
			}
		}
		if !unrecorded {
			return
		}
		select {
		case <-recorded:
		case <-deadline.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// taskOfGoalIn is the task of the fleet whose goal is goalID. Called with s.mu held.
func (s *Service) taskOfGoalIn(fleetID, goalID string) (*live, *Task) {
	l, ok := s.active[fleetID]
	if !ok {
		return nil, nil
	}
	for i := range l.f.Tasks {
		if l.f.Tasks[i].GoalID == goalID {
			return l, &l.f.Tasks[i]
		}
	}
	return nil, nil
}

// briefing is the hand-off a task's goal starts with, built as it launches so it holds what
// happened while it queued: its role and the context shared with its pane meanwhile, the
// reports of the tasks it depends on, and its worktree.
func (s *Service) briefing(ctx context.Context, g goal.Goal) string {
	s.mu.Lock()
	_, t := s.taskOfGoalIn(g.Spec.Group, g.ID)
	s.mu.Unlock()
	if t == nil {
		return ""
	}
	s.awaitRecorded(ctx, g.Spec.Group, t.ID)
	s.mu.Lock()
	defer s.mu.Unlock()
	l, t := s.taskOfGoalIn(g.Spec.Group, g.ID)
	if t == nil || t.Status != TaskWaiting {
		return ""
	}
	var b strings.Builder
	b.WriteString(s.startBriefing(ctx, t))
	for _, d := range t.DependsOn {
		dt, ok := l.f.Task(d)
		if !ok {
			continue
		}
		status, report := dt.Status, dt.Report
		if !status.Ended() && dt.GoalID != "" {
			// Its end is not recorded yet (recordWait passed): the goal's own report.
			if dg, err := s.goals.Get(ctx, dt.GoalID); err == nil && dg.Status.Finished() {
				status, report = taskStatusOf(dg), s.report(dg)
			}
		}
		switch {
		case status == TaskCompleted:
			fmt.Fprintf(&b, "Task %s (%q) verified complete. Its report:\n%s\n\n", dt.ID, dt.Goal, report)
		default:
			// Steered past it by the person: the agent should know what did not work.
			fmt.Fprintf(&b, "Task %s (%q), which this task depends on, did not complete (%s). Its report:\n%s\n\n", dt.ID, dt.Goal, status, orNone(report+dt.Reason))
		}
	}
	if wt := t.Worktree; wt != nil {
		fmt.Fprintf(&b, "You work in your own git worktree, %s, on branch %s: other tasks of the fleet work in their own, so edit freely here. The fleet commits what you leave there when your task ends.\n\n", wt.WorkDir, wt.Branch)
		b.WriteString(runEnvLine(wt))
	}
	return strings.TrimSpace(b.String())
}

// launched marks a task running: its goal runs now.
func (s *Service) launched(g goal.Goal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, t := s.taskOfGoalIn(g.Spec.Group, g.ID)
	if t == nil || t.Status != TaskWaiting {
		return // ended (or aborted) meanwhile
	}
	now := time.Now().UTC()
	t.Status, t.StartedAt = TaskRunning, &now
	s.publishTask(&l.f, t)
	if err := s.save(s.ctx, &l.f); err != nil {
		s.log.Error("fleet: save", "fleet", l.f.ID, "err", err)
	}
	s.deliverLate(t.Pane, g.ID)
}

// deliverLate hands a task's goal the context shared with its pane after its briefing was
// built, while it launched: it reads it on its next turn. Called with s.mu held.
func (s *Service) deliverLate(pane, goalID string) {
	r, err := s.agentRecord(s.ctx, pane)
	if err != nil {
		return
	}
	changed := false
	for i := range r.Inbox {
		if it := &r.Inbox[i]; !it.Delivered && s.goals.ShareContext(s.ctx, goalID, it.From, it.Text) == nil {
			it.Delivered, changed = true, true
		}
	}
	if changed {
		if err := s.saveAgent(s.ctx, r); err != nil {
			s.log.Warn("fleet: save the pane's agent", "pane", pane, "err", err)
		}
	}
}

// finishTask commits an isolated task's work on its branch once its goal ended, outside
// s.mu (git takes a while), and returns its worktree as it is now (nil without one).
func (s *Service) finishTask(fleetID, taskID string, g goal.Goal) *Worktree {
	s.mu.Lock()
	var snap Fleet
	var task Task
	if l, ok := s.active[fleetID]; ok {
		if t, ok := l.f.Task(taskID); ok && t.Worktree != nil && t.GoalID == g.ID {
			snap, task = l.f, *t
			w := *t.Worktree
			task.Worktree = &w
		}
	}
	s.mu.Unlock()
	if task.Worktree == nil {
		return nil
	}
	task.Status = taskStatusOf(g)
	finishWorktree(s.ctx, &snap, &task, task.Worktree)
	return task.Worktree
}

func taskStatusOf(g goal.Goal) TaskStatus {
	switch g.Status {
	case goal.StatusCompleted:
		return TaskCompleted
	case goal.StatusAborted:
		return TaskAborted
	}
	return TaskFailed
}

// taskEnded records a task's goal's end and schedules what it unblocks.
func (s *Service) taskEnded(fleetID, taskID string, g goal.Goal, wt *Worktree) {
	report := s.report(g)
	s.mu.Lock()
	defer s.mu.Unlock()
	began := time.Now()
	defer s.stats.add(began)
	l, ok := s.active[fleetID]
	if !ok {
		return
	}
	t, ok := l.f.Task(taskID)
	if !ok || t.Status.Ended() || t.GoalID != g.ID {
		return
	}
	defer s.noteRecorded()
	now := time.Now().UTC()
	if t.Status == TaskWaiting && g.StartedAt == nil && g.Status == goal.StatusAborted {
		// Withdrawn from the queue before it ran: because a dependency failed (the Goal Runner
		// does that), which blocks it as any failed dependency does; or by the person.
		s.propagateBlocks(&l.f)
		if t.Status == TaskWaiting {
			t.Status, t.Report, t.EndedAt = TaskAborted, g.Report, &now
			s.publishTask(&l.f, t)
		}
		s.schedule(l)
		return
	}
	if t.StartedAt == nil {
		t.StartedAt = &now // it ended before its start was told (a goal that could not start)
	}
	t.Report, t.EndedAt, t.Status = report, &now, taskStatusOf(g)
	if why, ok := s.failedBy[g.ID]; ok {
		delete(s.failedBy, g.ID)
		t.Status, t.Report = TaskFailed, why+"\n\n"+report
	}
	if wt != nil {
		t.Worktree = wt
		t.Report += "\n" + branchLine(wt)
	}
	s.publishTask(&l.f, t)
	s.schedule(l)
}

// noteRecorded wakes whoever waits for a task's end to be recorded (awaitRecorded).
// Called with s.mu held.
func (s *Service) noteRecorded() {
	close(s.recorded)
	s.recorded = make(chan struct{})
}

// queueOf is the fleet's waiting tasks that are ready (every dependency verified complete),
// in the order they start: as the Goal Runner queues their goals (priority, then age), then
// those not handed to it yet (a worktree being prepared), by priority and place.
func (s *Service) queueOf(f *Fleet) []string {
	byGoal := map[string]string{}
	var later []*Task
	for i := range f.Tasks {
		t := &f.Tasks[i]
		switch {
		case t.Status != TaskWaiting || !depsCompleted(f, t):
		case t.GoalID != "":
			byGoal[t.GoalID] = t.ID
		default:
			later = append(later, t)
		}
	}
	ids := []string{}
	if len(byGoal) > 0 {
		for _, gid := range s.goals.Queue() {
			if id, ok := byGoal[gid]; ok {
				ids = append(ids, id)
			}
		}
	}
	slices.SortStableFunc(later, func(a, b *Task) int {
		if a.Priority != b.Priority {
			return b.Priority - a.Priority
		}
		return a.Seq - b.Seq
	})
	for _, t := range later {
		ids = append(ids, t.ID)
	}
	return ids
}

package goal

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/clusterspace/clusterspace/backend/agent"
)

// The scheduler: which queued goal starts next. It is the only one: a fleet hands its tasks
// to it as goals of a group, so a task runs exactly when its goal does, and one set of
// rules (limits, priority, dependencies, panes) holds for every goal.

// queuePoll is how often WaitQueued looks again without being told of a change: Abort and
// Delete take a goal out of the queue without the scheduler's notice.
const queuePoll = 250 * time.Millisecond

// GroupOwner takes part in the scheduling of a group of goals (a fleet, for its tasks).
// Its hooks run outside the service's lock, so they may call the service back.
type GroupOwner struct {
	// Briefing is what a goal of the group learns in its first prompt besides its goal
	// (added to Spec.Handoff). It is asked as the goal launches, not when it was queued, so
	// it carries what happened meanwhile: the reports of the goals it waited for, context
	// shared with its pane. The goal holds its slot while it is asked.
	Briefing func(ctx context.Context, g Goal) string
	// Launched is told that a goal of the group runs now: the owner shows it running only
	// from then on.
	Launched func(g Goal)
}

// schedState is the scheduler's memory beside s.queue, guarded by s.mu.
type schedState struct {
	groups map[string]GroupOwner // the open groups
	// slots is what the scheduler needs of each queued or running goal, so a pass over a
	// long queue (a fleet hands over all its tasks at once) reads nothing from the store.
	slots map[string]slot
	// starting holds the goals picked to start whose owner is still briefing them: they stay
	// queued (Abort and Delete find them there) and hold their slot.
	starting map[string]slot
	// announcing counts, by group, launches whose owner has not been told yet (Settle).
	announcing map[string]int
	// ended remembers dependencies seen finished: a finished goal may be pruned from the
	// store before its dependant gets a slot, and must still count as done.
	ended map[string]Status
	// changed is closed (and replaced) when the queue or the runs change (Settle, WaitQueued).
	changed chan struct{}
}

// slot is what scheduling looks at in a goal's spec, and the queued goal itself: a goal in
// the queue is pending (Abort and Delete take it out first), so it launches without a read.
type slot struct {
	pane, group     string
	limit, priority int
	deps            []string
	goal            Goal
}

func slotOf(g Goal) slot {
	return slot{pane: g.Spec.PaneID, group: g.Spec.Group, limit: g.Spec.GroupLimit, priority: g.Spec.Priority, deps: g.Spec.DependsOn, goal: g}
}

func (sc *schedState) init() {
	if sc.slots == nil {
		sc.groups, sc.slots, sc.starting = map[string]GroupOwner{}, map[string]slot{}, map[string]slot{}
		sc.announcing, sc.ended, sc.changed = map[string]int{}, map[string]Status{}, make(chan struct{})
	}
}

// notify wakes whoever waits for a change of the queue.
func (sc *schedState) notify() {
	sc.init()
	close(sc.changed)
	sc.changed = make(chan struct{})
}

// Start validates a goal, stores it as pending and queues it. Every mistake in the spec is
// refused here, naming the field, rather than discovered when the agent claims success.
func (s *Service) Start(ctx context.Context, spec Spec) (Goal, error) {
	spec, err := s.validate(ctx, outOfWorktree(spec))
	if err != nil {
		return Goal{}, err
	}
	if spec.GroupLimit < 0 {
		return Goal{}, &FieldError{"groupLimit", "must be 0 (only the service's limit) or more"}
	}
	if spec.Group = strings.TrimSpace(spec.Group); spec.Group != "" {
		s.mu.Lock()
		_, open := s.sched.groups[spec.Group]
		s.mu.Unlock()
		if !open {
			return Goal{}, &FieldError{"group", fmt.Sprintf("%q is not open here: a group's goals are queued by its owner (a fleet this process drives)", spec.Group)}
		}
	}
	now := time.Now().UTC()
	g := Goal{ID: agent.NewID("goal-"), Spec: spec, Status: StatusPending, CreatedAt: now, UpdatedAt: now}
	if spec.Worktree != nil {
		if g.Spec, err = intoWorktree(ctx, g.ID, spec); err != nil {
			return Goal{}, err
		}
	}
	if err := s.save(ctx, g, Event{Type: EventStatus, Data: mustJSON(map[string]any{"status": StatusPending})}); err != nil {
		if g.Spec.Worktree != nil {
			removeWorktree(context.WithoutCancel(ctx), *g.Spec.Worktree)
		}
		return Goal{}, err
	}
	s.mu.Lock()
	s.sched.init()
	s.queue = append(s.queue, g.ID)
	s.sched.slots[g.ID] = slotOf(g)
	s.schedule()
	s.mu.Unlock()
	s.prune(ctx)
	return s.repo.Goal(ctx, g.ID)
}

// OpenGroup lets the goals of a group start, with the owner's hooks. Until then (after a
// restart, say, until the fleet resumes) they stay queued: no other door runs a fleet's
// tasks without the fleet.
func (s *Service) OpenGroup(id string, owner GroupOwner) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sched.init()
	s.sched.groups[id] = owner
	s.schedule()
}

// CloseGroup holds the group's queued goals again (a fleet that ends or is aborted); its
// running goals go on.
func (s *Service) CloseGroup(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sched.init()
	delete(s.sched.groups, id)
	s.sched.notify()
}

// Settle waits until no goal of the group is between the queue and its run (being briefed,
// or launched with its owner not yet told): what the owner shows afterwards is what runs.
func (s *Service) Settle(ctx context.Context, group string) error {
	return s.waitWhile(ctx, 0, func() bool {
		busy := s.sched.announcing[group] > 0
		for _, sl := range s.sched.starting {
			busy = busy || sl.group == group
		}
		return busy
	})
}

// WaitQueued blocks while the goal is queued (waiting, or being briefed): it returns once it
// runs, ended, or is gone. Wait does the rest; this wait reads no store, so many queued
// goals can be waited for at once.
func (s *Service) WaitQueued(ctx context.Context, id string) error {
	return s.waitWhile(ctx, queuePoll, func() bool { return slices.Contains(s.queue, id) })
}

// waitWhile blocks while held, asked under the service's lock, says so: it asks again at
// each change of the schedule, and every poll as well when poll is over 0.
func (s *Service) waitWhile(ctx context.Context, poll time.Duration, held func() bool) error {
	for {
		s.mu.Lock()
		s.sched.init()
		wait := held()
		changed := s.sched.changed
		s.mu.Unlock()
		if !wait {
			return nil
		}
		var tick <-chan time.Time
		if poll > 0 {
			tick = time.After(poll)
		}
		select {
		case <-changed:
		case <-tick:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Queue is the queued goals' ids in the order they are considered: the highest priority
// first, then the oldest. A goal starts in its turn once its dependencies completed and its
// group, if any, has room and its pane is free.
func (s *Service) Queue() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sched.init()
	return s.queueOrder()
}

// queueOrder is Queue, with s.mu held.
func (s *Service) queueOrder() []string {
	order := make([]string, 0, len(s.queue))
	for _, id := range s.queue {
		if _, ok := s.queuedSlot(id); ok {
			order = append(order, id)
		}
	}
	slices.SortStableFunc(order, func(a, b string) int { return cmp.Compare(s.sched.slots[b].priority, s.sched.slots[a].priority) })
	return order
}

// schedule withdraws the queued goals whose dependency failed, was aborted or is gone, then
// starts queued goals while there is room: the highest priority first, then the oldest,
// each once every goal it depends on completed. A goal of a group starts only while its
// group is open, below the group's limit, and when no goal works in its pane (a fleet's
// tasks take turns in a shared pane); a goal of no group starts as the person asked. Called
// with s.mu held.
func (s *Service) schedule() {
	if s.ctx.Err() != nil {
		return
	}
	sc := &s.sched
	sc.init()
	defer sc.notify()
	// Until nothing changes: a withdrawn goal may be the dependency of one queued before it.
	for s.withdrawBlocked() {
	}
	busy := len(s.runs) + len(sc.starting)
	inGroup, panes := map[string]int{}, map[string]bool{}
	for id, r := range s.runs {
		panes[r.paneID] = true
		if sl, ok := s.runSlot(id); ok && sl.group != "" {
			inGroup[sl.group]++
		}
	}
	for _, sl := range sc.starting {
		panes[sl.pane] = true
		inGroup[sl.group]++
	}
	done := map[string]bool{}
	for _, id := range s.queueOrder() {
		if busy >= s.opts.MaxConcurrent {
			break
		}
		sl := sc.slots[id]
		if _, ok := sc.starting[id]; ok || !s.depsCompleted(sl) {
			continue
		}
		if sl.group == "" {
			done[id] = true
			if s.startNow(sl.goal) {
				busy++
				panes[sl.pane] = true
			}
			continue
		}
		owner, open := sc.groups[sl.group]
		if !open || (sl.limit > 0 && inGroup[sl.group] >= sl.limit) || panes[sl.pane] {
			continue
		}
		busy++
		inGroup[sl.group]++
		panes[sl.pane] = true
		sc.starting[id] = sl
		s.wg.Add(1)
		go s.startInSlot(id, sl, owner)
	}
	s.queue = slices.DeleteFunc(s.queue, func(id string) bool { return done[id] })
	s.forget()
}

// withdrawBlocked aborts each queued goal a dependency of which failed, was aborted or no
// longer exists, saying which; it reports whether it withdrew any. Called with s.mu held.
func (s *Service) withdrawBlocked() bool {
	withdrew := false
	for _, id := range slices.Clone(s.queue) {
		sl, ok := s.queuedSlot(id)
		if _, starting := s.sched.starting[id]; !ok || starting {
			continue
		}
		why := ""
		for _, dep := range sl.deps {
			switch st, known := s.depStatus(dep); {
			case !known:
				why = fmt.Sprintf("the goal it depends on (%s) no longer exists", dep)
			case st == StatusFailed || st == StatusAborted:
				why = fmt.Sprintf("the goal it depends on (%s) ended %s", dep, st)
			}
			if why != "" {
				break
			}
		}
		if why == "" {
			continue
		}
		s.queue = slices.DeleteFunc(s.queue, func(q string) bool { return q == id })
		g := sl.goal
		now := time.Now().UTC()
		g.Status, g.Report, g.EndedAt = StatusAborted, "Aborted: "+why+".", &now
		s.save(s.ctx, g, Event{Type: EventEnded, Data: mustJSON(map[string]any{"status": g.Status, "report": g.Report})})
		s.sched.ended[id] = StatusAborted
		withdrew = true
	}
	return withdrew
}

// depsCompleted reports whether every goal the slot's goal depends on completed.
func (s *Service) depsCompleted(sl slot) bool {
	for _, dep := range sl.deps {
		if st, _ := s.depStatus(dep); st != StatusCompleted {
			return false
		}
	}
	return true
}

// depStatus is where a dependency is; known is false when no goal has that id. A store
// that does not answer counts as "not yet": the dependant waits rather than being withdrawn.
func (s *Service) depStatus(id string) (st Status, known bool) {
	if _, ok := s.runs[id]; ok {
		delete(s.sched.ended, id) // re-opened: its earlier end no longer counts
		return StatusRunning, true
	}
	if slices.Contains(s.queue, id) {
		return StatusPending, true
	}
	if g, ok := s.lost[id]; ok {
		return g.Status, true
	}
	if st, ok := s.sched.ended[id]; ok {
		return st, true
	}
	g, err := s.repo.Goal(s.ctx, id)
	switch {
	case errors.Is(err, ErrNotFound):
		return "", false
	case err != nil:
		return StatusPending, true
	}
	if g.Status.Finished() {
		s.sched.ended[id] = g.Status
	}
	return g.Status, true
}

// queuedSlot is the slot of a queued goal, read from the store the first time (goals queued
// again at start); a goal gone or no longer pending leaves the queue. Called with s.mu held.
func (s *Service) queuedSlot(id string) (slot, bool) {
	if sl, ok := s.sched.slots[id]; ok {
		return sl, true
	}
	g, err := s.repo.Goal(s.ctx, id)
	if err != nil || g.Status != StatusPending {
		if !errors.Is(err, ErrNotFound) && err != nil {
			return slot{}, false // the store may answer next time
		}
		s.queue = slices.DeleteFunc(s.queue, func(q string) bool { return q == id })
		return slot{}, false
	}
	sl := slotOf(g)
	s.sched.slots[id] = sl
	return sl, true
}

// runSlot is the slot of a running goal (one resumed or re-opened is read from the store
// once). Called with s.mu held.
func (s *Service) runSlot(id string) (slot, bool) {
	if sl, ok := s.sched.slots[id]; ok {
		return sl, true
	}
	g, err := s.repo.Goal(s.ctx, id)
	if err != nil {
		return slot{}, false
	}
	sl := slotOf(g)
	sl.goal = Goal{} // only its place counts
	s.sched.slots[id] = sl
	return sl, true
}

// forget drops what the scheduler keeps of goals that are neither queued nor running, and
// the ends of dependencies no queued goal waits for. Called with s.mu held.
func (s *Service) forget() {
	sc := &s.sched
	queued := make(map[string]bool, len(s.queue))
	for _, id := range s.queue {
		queued[id] = true
	}
	for id := range sc.slots {
		if _, run := s.runs[id]; !run && !queued[id] {
			delete(sc.slots, id)
		}
	}
	if len(sc.ended) == 0 {
		return
	}
	wanted := map[string]bool{}
	for id := range queued {
		for _, d := range sc.slots[id].deps {
			wanted[d] = true
		}
	}
	for id := range sc.ended {
		if !wanted[id] {
			delete(sc.ended, id)
		}
	}
}

// startNow launches a queued goal of no group at once, as the service always did; a goal
// that cannot start fails saying why. It reports whether the goal runs. Called with s.mu held.
func (s *Service) startNow(g Goal) bool {
	if err := s.launch(g, nil, 0); err != nil {
		s.failStart(g, err)
		return false
	}
	return true
}

// startInSlot asks the group's owner for the goal's briefing, outside the lock (the owner
// may call the service), then launches it if it is still queued, its group still open and
// the service not stopping; the owner is told it runs. The slot was taken for it by schedule.
func (s *Service) startInSlot(id string, sl slot, owner GroupOwner) {
	defer s.wg.Done()
	brief := ""
	if owner.Briefing != nil {
		brief = strings.TrimSpace(owner.Briefing(s.ctx, sl.goal))
	}
	s.mu.Lock()
	delete(s.sched.starting, id)
	var started *Goal
	_, open := s.sched.groups[sl.group]
	if s.ctx.Err() == nil && open && slices.Contains(s.queue, id) {
		s.queue = slices.DeleteFunc(s.queue, func(q string) bool { return q == id })
		g := sl.goal
		if brief != "" {
			g.Spec.Handoff = strings.TrimSpace(g.Spec.Handoff + "\n\n" + brief)
		}
		if err := s.launch(g, nil, 0); err != nil {
			s.failStart(g, err)
		} else {
			g.Status = StatusRunning
			started = &g
			s.sched.announcing[sl.group]++
		}
	}
	s.schedule() // its slot is taken by its run now, or free for the next
	s.sched.notify()
	s.mu.Unlock()
	if started == nil {
		return
	}
	if owner.Launched != nil {
		owner.Launched(*started)
	}
	s.mu.Lock()
	if s.sched.announcing[sl.group]--; s.sched.announcing[sl.group] <= 0 {
		delete(s.sched.announcing, sl.group)
	}
	s.sched.notify()
	s.mu.Unlock()
}

// failStart ends a queued goal that could not start, saying why.
func (s *Service) failStart(g Goal, err error) {
	now := time.Now().UTC()
	g.Status, g.Report, g.EndedAt = StatusFailed, "Could not start: "+err.Error(), &now
	s.save(s.ctx, g, Event{Type: EventEnded, Data: mustJSON(map[string]any{"status": g.Status, "report": g.Report})})
}

package fleet

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// What happens to a task's work after it verified: the person's review sent back, a landing
// recorded, a refused landing handed back to the agent. The landing itself (replay, checks,
// moving the target) is backend/land's.

// maxStory bounds a task's story; the oldest notes go first.
const maxStory = 200

// Note adds an entry to a task's story and, when status is not "", sets where its work
// stands with its target (landed at commit, or refused).
func (s *Service) Note(ctx context.Context, fleetID, taskID string, note StoryNote, status LandStatus) (Fleet, error) {
	return s.changeTask(ctx, fleetID, taskID, func(_ *Fleet, t *Task) error {
		addNote(t, note)
		if status != "" {
			t.Review.Land = status
			if status == LandLanded {
				t.Review.LandCommit = note.Commit
			}
		}
		return nil
	})
}

func addNote(t *Task, note StoryNote) {
	if t.Review == nil {
		t.Review = &Review{}
	}
	if note.At.IsZero() {
		note.At = time.Now().UTC()
	}
	t.Review.Story = append(t.Review.Story, note)
	if n := len(t.Review.Story); n > maxStory {
		t.Review.Story = t.Review.Story[n-maxStory:]
	}
}

// SetWorktree records a task's worktree after the person's tools changed it (removed once
// its work landed).
func (s *Service) SetWorktree(ctx context.Context, fleetID, taskID string, wt Worktree) (Fleet, error) {
	return s.changeTask(ctx, fleetID, taskID, func(_ *Fleet, t *Task) error {
		t.Worktree = &wt
		return nil
	})
}

// changeTask applies fn to a task of a fleet, active or stored, saves it and tells the
// watchers.
func (s *Service) changeTask(ctx context.Context, fleetID, taskID string, fn func(f *Fleet, t *Task) error) (Fleet, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, _, err := s.liveOrStored(ctx, fleetID)
	if err != nil {
		return Fleet{}, err
	}
	f := &l.f
	t, ok := f.Task(taskID)
	if !ok {
		return Fleet{}, fmt.Errorf("fleet %s has no task %q", fleetID, taskID)
	}
	if err := fn(f, t); err != nil {
		return Fleet{}, err
	}
	f.UpdatedAt = time.Now().UTC()
	if err := s.save(ctx, f); err != nil {
		return Fleet{}, err
	}
	s.publishTask(f, t)
	return *f, nil
}

// liveOrStored is the fleet this process drives (active), else the stored one, not driven.
// Called with s.mu held.
func (s *Service) liveOrStored(ctx context.Context, id string) (l *live, active bool, err error) {
	if l, ok := s.active[id]; ok {
		return l, true, nil
	}
	f, err := s.repo.Fleet(ctx, id)
	if err != nil {
		return nil, false, err
	}
	return &live{f: f, done: make(chan struct{})}, false, nil
}

// Reopen sends a task that ended back to its agent with feedback (the person's review, or
// why its landing was refused): its goal goes on from where it ended, in its worktree, and
// must verify again. When the task has a target branch, the target is first merged into its
// branch, so the agent works on top of what landed meanwhile; a conflict is left in the
// worktree for the agent to resolve, and the feedback says so.
//
// With now, the goal goes on at once in this process (the app's doors). Without (the CLI's
// `land`), the task waits with its feedback and the fleet is left interrupted: `fleet
// resume` goes on with it.
func (s *Service) Reopen(ctx context.Context, fleetID, taskID, feedback string, now bool) (Fleet, error) {
	feedback = strings.TrimSpace(feedback)
	if feedback == "" {
		return Fleet{}, &FieldError{Task: fmt.Sprintf("%q", taskID), Field: "feedback", Msg: "say what the agent should change, so it knows what to do"}
	}
	snap, err := s.Get(ctx, fleetID)
	if err != nil {
		return Fleet{}, err
	}
	t, ok := snap.Task(taskID)
	if !ok {
		return Fleet{}, fmt.Errorf("fleet %s has no task %q", fleetID, taskID)
	}
	if !t.Status.Ended() {
		return Fleet{}, fmt.Errorf("task %s is %s: steer it instead, or wait until it ends", taskID, t.Status)
	}
	if t.GoalID == "" {
		return Fleet{}, fmt.Errorf("task %s never ran, so there is no agent to send feedback to: retry it instead", taskID)
	}
	if wt := t.Worktree; wt != nil {
		w := *wt
		note, err := w.CatchUp(ctx)
		if err != nil {
			return Fleet{}, fmt.Errorf("task %s: bringing its worktree up to date with %s: %w", taskID, wt.Target, err)
		}
		if note != "" {
			feedback += "\n\n" + note
		}
		if _, err := s.SetWorktree(ctx, fleetID, taskID, w); err != nil {
			return Fleet{}, err
		}
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	l, active, err := s.liveOrStored(ctx, fleetID)
	if err != nil {
		return Fleet{}, err
	}
	t, _ = l.f.Task(taskID)
	if !t.Status.Ended() {
		return Fleet{}, fmt.Errorf("task %s was started again meanwhile", taskID)
	}
	addNote(t, StoryNote{Kind: "reopened", Text: "sent back to its agent: " + firstLine(feedback)})
	t.Review.Feedback = feedback
	t.Review.Land = ""
	t.Status, t.Report, t.EndedAt = TaskWaiting, "", nil
	l.f.UpdatedAt = time.Now().UTC()
	if !now {
		if !active {
			l.f.Status = StatusInterrupted
		}
		if err := s.save(ctx, &l.f); err != nil {
			return Fleet{}, err
		}
		s.publishTask(&l.f, t)
		s.publishFleet(&l.f)
		return l.f, nil
	}
	if err := s.reopenGoal(ctx, l, t); err != nil {
		return Fleet{}, err
	}
	return s.runOn(l, !active), nil
}

// reopenGoal goes on with a waiting task's finished goal, with the feedback it waits with,
// and watches it. Called with s.mu held.
func (s *Service) reopenGoal(ctx context.Context, l *live, t *Task) error {
	if err := s.goals.Reopen(ctx, t.GoalID, t.Review.Feedback); err != nil {
		return fmt.Errorf("task %s: its goal could not go on: %w", t.ID, err)
	}
	now := time.Now().UTC()
	t.Review.Feedback = ""
	t.Status, t.StartedAt = TaskRunning, &now
	if err := s.save(ctx, &l.f); err != nil {
		s.log.Error("fleet: save", "fleet", l.f.ID, "err", err)
	}
	s.publishTask(&l.f, t)
	s.watch(l.f.ID, t.ID, t.GoalID)
	return nil
}

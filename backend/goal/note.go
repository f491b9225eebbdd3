package goal

import (
	"context"
	"fmt"
	"time"

	"github.com/clusterspace/clusterspace/backend/worktree"
)

// Event types of what happens to a finished goal's work after it ended.
const (
	EventLanded     = "landed"       // its branch landed on its target, verified there
	EventLandRefuse = "land_refused" // landing conflicted or a check failed on the result
)

// Note adds an event to a finished goal's story (its landing, a refusal) and, when wt is
// not nil, records its worktree as it is now (removed once landed). The store has it before
// any watcher hears of it.
func (s *Service) Note(ctx context.Context, id, typ string, data any, wt *worktree.Worktree) error {
	s.mu.Lock()
	_, running := s.runs[id]
	s.mu.Unlock()
	if running {
		return fmt.Errorf("goal %s is running: its work lands once it has verified and ended", id)
	}
	g, err := s.repo.Goal(ctx, id)
	if err != nil {
		return err
	}
	c := &Commit{ID: id, Events: []Event{{GoalID: id, Type: typ, Data: mustJSON(data), At: time.Now().UTC()}}}
	if wt != nil {
		w := *wt
		g.Spec.Worktree = &w
		g.UpdatedAt = time.Now().UTC()
		c.Goal = &g
	}
	if err := s.repo.CommitGoal(ctx, c); err != nil {
		return err
	}
	for _, e := range c.Events {
		s.publishStored(e)
	}
	return nil
}

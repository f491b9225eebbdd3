package engine

import (
	"context"

	"github.com/clusterspace/clusterspace/backend/review"
)

// reviewReopener re-opens reviewed work with the review as feedback: a fleet task through
// its fleet (which brings its branch up to date with its target first), a goal run alone
// through the Goal Runner.
type reviewReopener struct {
	e *Engine
	// now: the task's goal goes on at once (a door that drives fleets), else it waits with
	// its feedback for `fleet resume`.
	now bool
}

func (r reviewReopener) ReopenTask(ctx context.Context, fleetID, taskID, feedback string) error {
	_, err := r.e.Fleets.Reopen(ctx, fleetID, taskID, feedback, r.now)
	return err
}

func (r reviewReopener) ReopenGoal(ctx context.Context, goalID, feedback string) error {
	return r.e.Goals.Reopen(ctx, goalID, feedback)
}

// newReview is the review service over the engine's store, fleets and goals.
func (e *Engine) newReview(o options) *review.Service {
	return review.NewService(e.Store, e.Fleets, e.Goals, reviewReopener{e: e, now: resumesFleets[o.command]})
}

package land

import (
	"context"
	"fmt"

	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/worktree"
)

// Goals is what landing needs of the Goal Runner, for goals run in their own worktree.
type Goals interface {
	Get(ctx context.Context, id string) (goal.Goal, error)
	Reopen(ctx context.Context, id, feedback string) error
	Note(ctx context.Context, id, typ string, data any, wt *worktree.Worktree) error
}

// landGoal lands a goal's branch, as a fleet task's lands (without a fleet file: the
// repository's remembered check).
func (s *Service) landGoal(ctx context.Context, id string, strategy Strategy, onRefuse OnRefuse, check string) (Report, error) {
	g, err := s.goals.Get(ctx, id)
	if err != nil {
		return Report{}, fmt.Errorf("no fleet or goal is %s: give FLEET, FLEET/TASK or the id of a goal run with --worktree: %w", id, err)
	}
	if g.Spec.Worktree == nil {
		return Report{}, &FieldError{Field: "ref", Msg: fmt.Sprintf("goal %s ran without its own worktree, so it has no branch to land: its changes are in its working dir already", id)}
	}
	wt := *g.Spec.Worktree
	prefs, err := s.remember(ctx, wt.Repo, strategy, onRefuse, check)
	if err != nil {
		return Report{}, err
	}
	rep := Report{Strategy: first(strategy, prefs.Strategy, Rebase), Check: prefs.Check, OnRefuse: first(prefs.OnRefuse, ToAgent)}
	o := Outcome{Ref: id}
	switch {
	case g.Status != goal.StatusCompleted:
		o.Status, o.Detail = OutcomeSkipped, fmt.Sprintf("it is %s; only work that verified lands", g.Status)
	case wt.Pruned && landedBefore(ctx, wt):
		o.Status, o.Detail = OutcomeAlready, "its work landed before"
	default:
		o = s.landGoalWork(ctx, g, wt, rep)
	}
	rep.Outcomes = []Outcome{o}
	if o.Result != nil && o.Status == OutcomeLanded && o.Result.CheckedOut != "" {
		rep.Note = checkoutNote(o.Result.CheckedOut, wt.Target)
	}
	if o.Status == OutcomeRefused && rep.OnRefuse == ToAgent && !s.reopenNow {
		rep.Note = fmt.Sprintf("To let its agent resolve this and verify again: clusterspace goal reopen %s --feedback \"resolve the refused landing\" (its story has the output), then land again.", id)
	}
	return rep, nil
}

func (s *Service) landGoalWork(ctx context.Context, g goal.Goal, wt worktree.Worktree, rep Report) Outcome {
	o, failed := attempt(ctx, Outcome{Ref: g.ID}, wt, wt.Target, rep, "", g.Spec.Criterion, "Land goal "+g.ID+"\n\n"+firstLine(g.Spec.Goal))
	if o.Status == OutcomeRefused {
		if err := s.goals.Note(ctx, g.ID, goal.EventLandRefuse, map[string]string{"detail": o.Detail}, nil); err != nil {
			o.Detail += "\n(its story could not be written: " + err.Error() + ")"
		}
		if rep.OnRefuse == ToAgent && s.reopenNow {
			text := sendBackText(o.Detail, failed)
			if note, err := wt.CatchUp(ctx); err == nil && note != "" {
				text += "\n\n" + note
			}
			if err := s.goals.Reopen(ctx, g.ID, text); err != nil {
				o.Detail += "\n(it could not be sent back to its agent: " + err.Error() + ")"
			} else {
				o.SentBack = true
			}
		}
		return o
	}
	pruned := wt
	if err := s.removeLanded(ctx, wt, func(w worktree.Worktree) error { pruned = w; return nil }); err != nil {
		o.Detail += "; its worktree was kept: " + err.Error()
	}
	if err := s.goals.Note(ctx, g.ID, goal.EventLanded, map[string]string{"detail": o.Detail, "commit": o.Commit}, &pruned); err != nil {
		o.Detail += " (its story could not be written: " + err.Error() + ")"
	}
	return o
}

// landedBefore reports whether a removed worktree's last commit is on its target.
func landedBefore(ctx context.Context, wt worktree.Worktree) bool {
	if wt.Commit == "" || wt.Target == "" {
		return false
	}
	_, err := worktree.Git(ctx, wt.Repo, "merge-base", "--is-ancestor", wt.Commit, "refs/heads/"+wt.Target)
	return err == nil
}

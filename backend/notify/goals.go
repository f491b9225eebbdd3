package notify

import (
	"context"
	"encoding/json"

	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/pubsub"
)

// Titles of the goal notifications.
const (
	TitleApproval = "A goal needs your approval"
	titleEnded    = "Goal " // + the status: "Goal completed", "Goal failed", "Goal aborted"
)

// GoalNotice says what a person looking elsewhere should hear about a goal event: a goal
// that ended (completed, failed or aborted), or one that waits for their approval of a tool
// call. goalText is the goal as the person wrote it. ok is false for every other event.
func GoalNotice(e goal.Event, goalText string) (title, body string, ok bool) {
	switch e.Type {
	case goal.EventApprovalRequested:
		var a struct {
			Tool   string `json:"tool"`
			Status string `json:"status"`
		}
		if json.Unmarshal(e.Data, &a) != nil || a.Tool == "" || (a.Status != "" && a.Status != "pending") {
			return "", "", false
		}
		return TitleApproval, a.Tool + ": " + goalText, true
	case goal.EventEnded:
		var d struct {
			Status goal.Status `json:"status"`
		}
		if json.Unmarshal(e.Data, &d) != nil || !d.Status.Finished() {
			return "", "", false
		}
		return titleEnded + string(d.Status), goalText, true
	}
	return "", "", false
}

// GoalWatch is what WatchGoals needs besides the events.
type GoalWatch struct {
	// GoalText returns the goal's text (the notification's body names the goal).
	GoalText func(ctx context.Context, goalID string) string
	// Send shows one notification.
	Send func(ctx context.Context, title, body string) error
	// Quiet says the person is looking at the app now (its window has the focus): nothing is
	// shown, the window shows it already.
	Quiet func() bool
}

// WatchGoals shows a notification for each goal event GoalNotice picks, until ctx ends or the
// events stop. It runs in the caller's goroutine.
func WatchGoals(ctx context.Context, events <-chan pubsub.Event[goal.Event], w GoalWatch) {
	each(ctx, events, func(e goal.Event) {
		if e.Type != goal.EventApprovalRequested && e.Type != goal.EventEnded {
			return
		}
		if w.Quiet != nil && w.Quiet() {
			return
		}
		if title, body, ok := GoalNotice(e, w.GoalText(ctx, e.GoalID)); ok {
			w.Send(ctx, title, body) // Best effort: the window shows everything anyway.
		}
	})
}

// each hands every event's payload to fn, in the caller's goroutine, until ctx ends or the
// events stop.
func each[T any](ctx context.Context, events <-chan pubsub.Event[T], fn func(T)) {
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-events:
			if !ok {
				return
			}
			fn(ev.Payload)
		}
	}
}

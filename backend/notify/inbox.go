package notify

import (
	"context"

	"github.com/clusterspace/clusterspace/backend/inbox"
	"github.com/clusterspace/clusterspace/backend/pubsub"
)

// InboxWatch is what WatchInbox needs besides the events.
type InboxWatch struct {
	// Send shows one notification whose click runs onClick.
	Send func(ctx context.Context, title, body string, onClick func()) error
	// Quiet says the person is looking at the app now: nothing is shown.
	Quiet func() bool
	// Open lands on an item: the window comes forward and goes to it.
	Open func(item inbox.Item)
}

// WatchInbox shows a notification for each item that comes into the inbox, whose click opens
// it, until ctx ends or the events stop. The first list is what waited already: it is not told
// again. Approvals are left to WatchGoals, which tells them as they are asked. It runs in the
// caller's goroutine.
func WatchInbox(ctx context.Context, events <-chan pubsub.Event[inbox.List], w InboxWatch) {
	var seen map[string]bool
	each(ctx, events, func(list inbox.List) {
		now := make(map[string]bool, len(list.Items))
		for _, it := range list.Items {
			now[it.ID] = true
			if seen == nil || seen[it.ID] || it.Kind == inbox.KindApproval || (w.Quiet != nil && w.Quiet()) {
				continue
			}
			w.Send(ctx, it.Title, it.Detail, func() { w.Open(it) }) // Best effort: the window lists it anyway.
		}
		seen = now
	})
}

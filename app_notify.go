package main

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wailsapp/wails/v2/pkg/runtime"

	"github.com/clusterspace/clusterspace/backend/inbox"
	"github.com/clusterspace/clusterspace/backend/notify"
	"github.com/clusterspace/clusterspace/backend/pubsub"
)

// notifyTimeout bounds one notification: the desktop's service answers at once or not at all.
const notifyTimeout = 3 * time.Second

// desktopNotifier shows the window's notifications through the desktop's notification
// service. It connects on first use; when the session has no bus or no service it says so in
// the log once and then stays quiet: the window shows everything anyway.
type desktopNotifier struct {
	once   sync.Once
	n      *notify.Notifier
	warned sync.Once
	// focused is the window's focus as its page reports it: while the person looks at the
	// window, the window itself shows what a notification would say.
	focused atomic.Bool
	// show brings the window forward: a click on any notification does.
	show func()
}

func (d *desktopNotifier) send(ctx context.Context, title, body string) error {
	return d.sendClickable(ctx, title, body, nil)
}

// sendClickable shows a notification whose click brings the window forward, then runs onClick.
func (d *desktopNotifier) sendClickable(ctx context.Context, title, body string, onClick func()) error {
	d.once.Do(func() {
		n, err := notify.New()
		if err != nil {
			slog.Warn("desktop notifications are off", "err", err)
			return
		}
		d.n = n
	})
	if d.n == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, notifyTimeout)
	defer cancel()
	_, err := d.n.SendClickable(ctx, title, body, func() {
		if d.show != nil {
			d.show()
		}
		if onClick != nil {
			onClick()
		}
	})
	if err != nil {
		d.warned.Do(func() { slog.Warn("desktop notification not shown", "err", err) })
	}
	return nil
}

func (d *desktopNotifier) close() {
	if d.n != nil {
		d.n.Close()
	}
}

// notifyGoals raises a desktop notification when a goal ends or asks for approval while the
// window does not have the focus, until ctx ends. The Go side does it, not the page: the
// webview offers pages no notifications, and one subscriber means one notification per event.
func (a *App) notifyGoals(ctx context.Context) {
	notify.WatchGoals(ctx, a.eng.SubscribeGoals(ctx), notify.GoalWatch{
		GoalText: func(ctx context.Context, id string) string {
			g, _ := a.eng.Goals.Get(ctx, id) // Best effort: without its text the title still tells.
			return g.Spec.Goal
		},
		Send:  a.notifier.send,
		Quiet: a.notifier.focused.Load,
	})
}

// notifyInbox raises a desktop notification for each item that comes into the inbox while the
// window does not have the focus; its click brings the window forward and lands on the item
// (the page goes to it on the event inbox/open, as its key does).
func (a *App) notifyInbox(ctx context.Context) {
	notify.WatchInbox(ctx, a.eng.Inbox.Events().Subscribe(ctx), notify.InboxWatch{
		Send:  a.notifier.sendClickable,
		Quiet: a.notifier.focused.Load,
		Open: func(it inbox.Item) {
			runtime.EventsEmit(a.ctx, backendEvent, pubsub.Envelope{Topic: "inbox", Type: "open", Data: it})
		},
	})
}

// WindowFocused is how the page tells whether the window has the focus (it sees focus and
// blur; Wails offers Go no such query).
func (a *App) WindowFocused(focused bool) { a.notifier.focused.Store(focused) }

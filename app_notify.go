package main

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/clusterspace/clusterspace/backend/notify"
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
}

func (d *desktopNotifier) send(ctx context.Context, title, body string) error {
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
	_, err := d.n.Send(ctx, title, body)
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

// WindowFocused is how the page tells whether the window has the focus (it sees focus and
// blur; Wails offers Go no such query).
func (a *App) WindowFocused(focused bool) { a.notifier.focused.Store(focused) }

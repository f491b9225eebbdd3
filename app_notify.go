package main

import (
	"context"
	"log/slog"
	"sync"
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

// Notify shows a desktop notification (a goal ended, a tool waits for approval). It never
// fails the caller: without a notification service the window still shows everything.
func (a *App) Notify(title, body string) error { return a.notifier.send(a.ctx, title, body) }

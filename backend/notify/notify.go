// Package notify shows desktop notifications through the freedesktop notification service
// on the session D-Bus — what notify-send uses — for the desktop window, whose webview offers
// pages no notifications of its own.
package notify

import (
	"context"
	"errors"
	"fmt"

	"github.com/godbus/dbus/v5"
)

// The freedesktop notification service.
const (
	service = "org.freedesktop.Notifications"
	path    = "/org/freedesktop/Notifications"
	method  = service + ".Notify"
)

// appName is how notifications name their sender.
const appName = "ClusterSpace"

// expireMS is how long a notification stays: 8 s, long enough to read a goal's outcome.
const expireMS = int32(8000)

// ErrNoService means the session has no notification service (no desktop, or none running).
var ErrNoService = errors.New("no desktop notification service on the session bus")

// Notifier sends notifications over one session bus connection.
type Notifier struct {
	conn   *dbus.Conn
	clicks clicks
}

// New connects to the session bus named by DBUS_SESSION_BUS_ADDRESS. Without one it fails:
// the app then shows what it would have notified in its own window only.
func New() (*Notifier, error) {
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		return nil, fmt.Errorf("connect to the session D-Bus: %w", err)
	}
	return &Notifier{conn: conn}, nil
}

// Send shows a notification and returns its id.
func (n *Notifier) Send(ctx context.Context, title, body string) (uint32, error) {
	var id uint32
	obj := n.conn.Object(service, path)
	err := obj.CallWithContext(ctx, method, 0, appName, uint32(0), "", title, body,
		[]string{}, map[string]dbus.Variant{}, expireMS).Store(&id)
	var de dbus.Error
	if errors.As(err, &de) && de.Name == "org.freedesktop.DBus.Error.ServiceUnknown" {
		return 0, ErrNoService
	}
	if err != nil {
		return 0, fmt.Errorf("show a desktop notification: %w", err)
	}
	return id, nil
}

// Close drops the bus connection.
func (n *Notifier) Close() error {
	n.clicks.close(n.conn)
	return n.conn.Close()
}

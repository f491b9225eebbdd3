package notify

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/godbus/dbus/v5"
)

// The service's signals: the person invoked an action of a notification (clicking its body
// invokes "default"), or a notification went away.
const (
	signalAction = service + ".ActionInvoked"
	signalClosed = service + ".NotificationClosed"
	// actionDefault is the action a click on the notification invokes.
	actionDefault = "default"
)

// clicks follows the service's signals for the notifications sent with SendClickable, and
// runs each one's callback when it is clicked. It starts with the first such notification.
type clicks struct {
	start sync.Once
	err   error
	ch    chan *dbus.Signal
	stop  chan struct{}
	wg    sync.WaitGroup

	mu      sync.Mutex
	pending map[uint32]func()
}

// SendClickable shows a notification whose click runs onClick (in the Notifier's own
// goroutine: it should not block). A service without actions shows it all the same; its click
// then does nothing.
func (n *Notifier) SendClickable(ctx context.Context, title, body string, onClick func()) (uint32, error) {
	if err := n.follow(); err != nil {
		return 0, err
	}
	var id uint32
	obj := n.conn.Object(service, path)
	err := obj.CallWithContext(ctx, method, 0, appName, uint32(0), "", title, body,
		[]string{actionDefault, "Open"}, map[string]dbus.Variant{}, expireMS).Store(&id)
	var de dbus.Error
	if errors.As(err, &de) && de.Name == "org.freedesktop.DBus.Error.ServiceUnknown" {
		return 0, ErrNoService
	}
	if err != nil {
		return 0, fmt.Errorf("show a desktop notification: %w", err)
	}
	n.clicks.mu.Lock()
	n.clicks.pending[id] = onClick
	n.clicks.mu.Unlock()
	return id, nil
}

// follow subscribes to the service's signals, once.
func (n *Notifier) follow() error {
	c := &n.clicks
	c.start.Do(func() {
		for _, member := range []string{"ActionInvoked", "NotificationClosed"} {
			if err := n.conn.AddMatchSignal(dbus.WithMatchInterface(service), dbus.WithMatchMember(member)); err != nil {
				c.err = fmt.Errorf("follow the clicks on desktop notifications: %w", err)
				return
			}
		}
		c.pending = map[uint32]func(){}
		c.ch, c.stop = make(chan *dbus.Signal, 16), make(chan struct{})
		n.conn.Signal(c.ch)
		c.wg.Go(func() { c.loop() })
	})
	return c.err
}

func (c *clicks) loop() {
	for {
		select {
		case <-c.stop:
			return
		case s, ok := <-c.ch:
			if !ok {
				return
			}
			c.handle(s)
		}
	}
}

func (c *clicks) handle(s *dbus.Signal) {
	if len(s.Body) < 2 {
		return
	}
	id, _ := s.Body[0].(uint32)
	c.mu.Lock()
	fn := c.pending[id]
	switch {
	case s.Name == signalClosed:
		delete(c.pending, id)
		fn = nil
	case s.Name == signalAction && s.Body[1] == actionDefault:
		delete(c.pending, id)
	default:
		fn = nil
	}
	c.mu.Unlock()
	if fn != nil {
		fn()
	}
}

// close stops following the signals (before the connection closes).
func (c *clicks) close(conn *dbus.Conn) {
	if c.stop == nil {
		return
	}
	conn.RemoveSignal(c.ch)
	close(c.stop)
	c.wg.Wait()
}

package notify_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/notify"
	"github.com/clusterspace/clusterspace/backend/notify/notifytest"
	"github.com/clusterspace/clusterspace/backend/terminal/terminaltest"
)

// display is the virtual X display dunst draws on; TestMain starts it with a private session
// bus: the notification daemon is the real one, dunst, started by each test.
var display string

func TestMain(m *testing.M) {
	stopBus, err := notifytest.SessionBus()
	if err != nil {
		fmt.Fprintln(os.Stderr, "notify tests:", err)
		os.Exit(1)
	}
	var stopX func()
	display, stopX, err = notifytest.Xvfb("1024x768x24")
	if err != nil {
		stopBus()
		fmt.Fprintln(os.Stderr, "notify tests:", err)
		os.Exit(1)
	}
	cleanHome := terminaltest.IsolateHome() // the goals' terminals run bash
	code := m.Run()
	cleanHome()
	stopX()
	stopBus()
	os.Exit(code)
}

// startDunst starts dunst for one test and stops it after.
func startDunst(t *testing.T) *notifytest.Dunst {
	t.Helper()
	d, err := notifytest.StartDunst(display)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		d.Stop()
		notifytest.WaitName("org.freedesktop.Notifications", false)
	})
	return d
}

// waitShown waits until dunst has received n notifications and returns them.
func waitShown(t *testing.T, d *notifytest.Dunst, n int) []notifytest.Notification {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		got, err := d.Shown()
		if err != nil {
			t.Fatal(err)
		}
		if len(got) >= n || time.Now().After(deadline) {
			if len(got) != n {
				t.Fatalf("dunst received %d notifications, want %d: %+v", len(got), n, got)
			}
			return got
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// newNotifier is a notifier on the session bus, closed when the test ends.
func newNotifier(t *testing.T) *notify.Notifier {
	t.Helper()
	n, err := notify.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}

func TestSendReachesDunst(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	n := newNotifier(t)
	if _, err := n.Send(ctx, "Goal completed", "done.txt exists"); !errors.Is(err, notify.ErrNoService) {
		t.Fatalf("without a notification daemon: %v", err)
	}

	d := startDunst(t)
	id, err := n.Send(ctx, "Goal completed", "done.txt exists")
	if err != nil || id == 0 {
		t.Fatalf("send: %d %v", id, err)
	}
	got := waitShown(t, d, 1)
	if got[0] != (notifytest.Notification{AppName: "ClusterSpace", Summary: "Goal completed", Body: "done.txt exists"}) {
		t.Fatalf("dunst shows %+v", got[0])
	}
}

func TestNewWithoutASessionBusFails(t *testing.T) {
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/bus")
	if _, err := notify.New(); err == nil || !strings.Contains(err.Error(), "session D-Bus") {
		t.Fatalf("connected to a bus that is not there: %v", err)
	}
}

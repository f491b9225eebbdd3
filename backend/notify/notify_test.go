package notify_test

import (
	"bufio"
	"context"
	"errors"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/clusterspace/clusterspace/backend/notify"
)

// sessionBus starts a private session D-Bus (a real dbus-daemon) and points the process at it.
func sessionBus(t *testing.T) string {
	t.Helper()
	cmd := exec.Command("dbus-daemon", "--session", "--nofork", "--print-address")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("dbus-daemon (scripts/setup.sh installs dbus): %v", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	addr = strings.TrimSpace(addr)
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", addr)
	return addr
}

// daemon is the notification service's side of the protocol: it owns the well-known name on
// the bus and records each Notify call, as a desktop's notification daemon would receive it.
type daemon struct {
	mu   sync.Mutex
	got  [][]any
	next uint32
}

func (d *daemon) Notify(app string, replaces uint32, icon, summary, body string, actions []string,
	hints map[string]dbus.Variant, timeout int32) (uint32, *dbus.Error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.next++
	d.got = append(d.got, []any{app, summary, body, timeout})
	return d.next, nil
}

func TestSendReachesTheNotificationService(t *testing.T) {
	sessionBus(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	n, err := notify.New()
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if _, err := n.Send(ctx, "Goal completed", "done.txt exists"); !errors.Is(err, notify.ErrNoService) {
		t.Fatalf("without a notification service: %v", err)
	}

	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	d := &daemon{}
	if err := conn.Export(d, "/org/freedesktop/Notifications", "org.freedesktop.Notifications"); err != nil {
		t.Fatal(err)
	}
	if reply, err := conn.RequestName("org.freedesktop.Notifications", dbus.NameFlagDoNotQueue); err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("own the service name: %v %v", reply, err)
	}
	id, err := n.Send(ctx, "Goal completed", "done.txt exists")
	if err != nil || id != 1 {
		t.Fatalf("send: %d %v", id, err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.got) != 1 || d.got[0][0] != "ClusterSpace" || d.got[0][1] != "Goal completed" || d.got[0][2] != "done.txt exists" || d.got[0][3] != int32(8000) {
		t.Fatalf("the service got %v", d.got)
	}
}

func TestNewWithoutASessionBusFails(t *testing.T) {
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/bus")
	if _, err := notify.New(); err == nil {
		t.Fatal("connected to a bus that is not there")
	}
}

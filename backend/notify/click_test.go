package notify_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/clusterspace/clusterspace/backend/inbox"
	"github.com/clusterspace/clusterspace/backend/notify"
	"github.com/clusterspace/clusterspace/backend/pubsub"
)

// A click on a notification sent with SendClickable runs its callback, once; the person's
// click is made the way dunstctl makes it, through dunst's own interface.
func TestClickOnANotificationRunsItsCallback(t *testing.T) {
	startDunst(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	n := newNotifier(t)
	clicked := make(chan string, 2)
	if _, err := n.SendClickable(ctx, "Task blocked: build / b", "task a failed", func() { clicked <- "b" }); err != nil {
		t.Fatal(err)
	}
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	dunst := conn.Object("org.freedesktop.Notifications", "/org/freedesktop/Notifications")
	// dunst draws it a moment after it answers: click once it is displayed.
	deadline := time.Now().Add(10 * time.Second)
	for {
		var shown uint32
		if v, err := dunst.GetProperty("org.dunstproject.cmd0.displayedLength"); err == nil {
			shown, _ = v.Value().(uint32)
		}
		if shown > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("dunst never displayed the notification")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := dunst.Call("org.dunstproject.cmd0.NotificationAction", 0, uint32(0)).Err; err != nil {
		t.Fatalf("click through dunst: %v", err)
	}
	select {
	case got := <-clicked:
		if got != "b" {
			t.Fatalf("clicked %q", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the click never reached the callback")
	}
	select {
	case <-clicked:
		t.Fatal("one click ran the callback twice")
	case <-time.After(300 * time.Millisecond):
	}
}

// An item that comes into the inbox is told once, with a click that opens it; what waited
// already, approvals (told by WatchGoals) and items while the window has the focus are not.
func TestWatchInboxTellsNewItemsAndOpensThemOnClick(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events := make(chan pubsub.Event[inbox.List], 4)
	list := func(items ...inbox.Item) {
		events <- pubsub.Event[inbox.List]{Type: inbox.EventChanged, Payload: inbox.List{Items: items}}
	}
	old := inbox.Item{ID: "task_failed:f/a", Kind: inbox.KindTaskFailed, Title: "Task failed: f / a"}
	blocked := inbox.Item{ID: "task_blocked:f/b", Kind: inbox.KindTaskBlocked, Title: "Task blocked: f / b", Detail: "a failed"}
	ask := inbox.Item{ID: "approval:x", Kind: inbox.KindApproval, Title: "Approve run_command"}
	idle := inbox.Item{ID: "agent_idle:p", Kind: inbox.KindAgentIdle, Title: "Idle at its prompt: p"}
	var quiet atomic.Bool
	type sent struct {
		title, body string
		click       func()
	}
	got, opened := make(chan sent, 8), make(chan inbox.Item, 8)
	done := make(chan struct{})
	go func() {
		defer close(done)
		notify.WatchInbox(ctx, events, notify.InboxWatch{
			Send: func(_ context.Context, title, body string, onClick func()) error {
				got <- sent{title, body, onClick}
				return nil
			},
			Quiet: quiet.Load,
			Open:  func(it inbox.Item) { opened <- it },
		})
	}()
	list(old)
	list(old, blocked, ask)
	s := <-got
	if s.title != blocked.Title || s.body != "a failed" {
		t.Fatalf("told %+v", s)
	}
	s.click()
	if it := <-opened; it.ID != blocked.ID {
		t.Fatalf("the click opened %+v", it)
	}
	quiet.Store(true)
	list(old, blocked, ask, idle)
	close(events)
	<-done
	if len(got) != 0 {
		t.Fatalf("told more: %+v", <-got)
	}
}

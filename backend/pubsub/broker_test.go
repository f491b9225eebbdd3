package pubsub

import (
	"context"
	"sync"
	"testing"
	"time"
)

func TestPublishReachesEverySubscriber(t *testing.T) {
	t.Parallel()
	b := NewBroker[int]()
	defer b.Shutdown()
	ctx := t.Context()
	a, c := b.Subscribe(ctx), b.Subscribe(ctx)
	b.Publish("n", 7)
	for _, ch := range []<-chan Event[int]{a, c} {
		select {
		case ev := <-ch:
			if ev.Type != "n" || ev.Payload != 7 {
				t.Fatalf("got %+v, want n/7", ev)
			}
		case <-time.After(time.Second):
			t.Fatal("subscriber got nothing")
		}
	}
}

func TestSlowSubscriberNeverBlocksPublisher(t *testing.T) {
	t.Parallel()
	b := NewBrokerBuffer[int](4)
	defer b.Shutdown()
	stuck := b.Subscribe(t.Context()) // never read
	start := time.Now()
	for i := range 10_000 {
		b.Publish("n", i)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("10k publishes with a stuck subscriber took %v", d)
	}
	if got := b.Dropped(); got != 10_000-4 {
		t.Fatalf("dropped %d, want %d", got, 10_000-4)
	}
	// The subscriber keeps the oldest events it had room for.
	if ev := <-stuck; ev.Payload != 0 {
		t.Fatalf("first buffered event %d, want 0", ev.Payload)
	}
}

func TestPublishMustWaitsForRoom(t *testing.T) {
	t.Parallel()
	b := NewBrokerBuffer[string](1)
	defer b.Shutdown()
	ch := b.Subscribe(t.Context())
	b.Publish("fill", "x") // buffer now full
	delivered := make(chan error, 1)
	go func() { delivered <- b.PublishMust(context.Background(), "ended", "final") }()
	select {
	case <-delivered:
		t.Fatal("PublishMust returned while the subscriber's buffer was full")
	case <-time.After(50 * time.Millisecond):
	}
	if ev := <-ch; ev.Type != "fill" {
		t.Fatalf("got %q first, want fill", ev.Type)
	}
	if err := <-delivered; err != nil {
		t.Fatalf("PublishMust: %v", err)
	}
	if ev := <-ch; ev.Type != "ended" || ev.Payload != "final" {
		t.Fatalf("got %+v, want the final event", ev)
	}
}

func TestPublishMustGivesUpOnGoneSubscriberAndOnContext(t *testing.T) {
	t.Parallel()
	b := NewBrokerBuffer[int](1)
	defer b.Shutdown()
	subCtx, cancelSub := context.WithCancel(context.Background())
	b.Subscribe(subCtx)
	b.Publish("fill", 1)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if err := b.PublishMust(ctx, "x", 2); err == nil {
		t.Fatal("PublishMust to a full, live subscriber returned nil after its context ended")
	}

	done := make(chan error, 1)
	go func() { done <- b.PublishMust(context.Background(), "x", 3) }()
	time.Sleep(20 * time.Millisecond)
	cancelSub() // the subscriber leaves: the blocked send must be released
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("PublishMust after the subscriber left: %v", err)
		}
	case <-time.After(time.Second):
		t.Fatal("PublishMust stayed blocked on a subscriber that left")
	}
}

func TestSubscriptionEndsWithContextAndShutdown(t *testing.T) {
	t.Parallel()
	b := NewBroker[int]()
	ctx, cancel := context.WithCancel(context.Background())
	ch := b.Subscribe(ctx)
	cancel()
	waitClosed(t, ch)
	if n := b.Subscribers(); n != 0 {
		t.Fatalf("%d subscribers left after cancel", n)
	}
	ch2 := b.Subscribe(context.Background())
	b.Shutdown()
	waitClosed(t, ch2)
	b.Publish("after", 1) // must not panic
	waitClosed(t, b.Subscribe(context.Background()))
}

func waitClosed(t *testing.T, ch <-chan Event[int]) {
	t.Helper()
	timeout := time.After(time.Second)
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return
			}
		case <-timeout:
			t.Fatal("channel not closed")
		}
	}
}

// Run with -race: publishers, must-publishers, subscribers coming and going, and shutdown.
func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	b := NewBrokerBuffer[int](8)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithCancel(context.Background())
			ch := b.Subscribe(ctx)
			for range 50 {
				select {
				case <-ch:
				default:
				}
			}
			if i%2 == 0 {
				cancel()
			} else {
				defer cancel()
			}
		}()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 200 {
				b.Publish("n", j)
				if j%50 == 0 {
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
					_ = b.PublishMust(ctx, "m", j) // Best effort: subscribers may be full.
					cancel()
				}
			}
		}()
	}
	wg.Wait()
	b.Shutdown()
}

func TestRelayWrapsEventsUntilCancelled(t *testing.T) {
	t.Parallel()
	b := NewBroker[string]()
	defer b.Shutdown()
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan Envelope, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		Relay(ctx, b, "things", func(e Envelope) { got <- e })
	}()
	for b.Subscribers() == 0 {
		time.Sleep(time.Millisecond)
	}
	b.Publish("made", "x")
	if e := <-got; e.Topic != "things" || e.Type != "made" || e.Data != "x" {
		t.Fatalf("envelope %+v", e)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(time.Second):
		t.Fatal("Relay did not return after cancel")
	}
}

func TestViewsReplaceStopAndStopAll(t *testing.T) {
	t.Parallel()
	var v Views
	ended := make(chan string, 3)
	run := func(name string) func(ctx context.Context) {
		return func(ctx context.Context) { <-ctx.Done(); ended <- name }
	}
	v.Start(context.Background(), "a", run("a1"))
	v.Start(context.Background(), "a", run("a2")) // replaces a1
	if got := <-ended; got != "a1" {
		t.Fatalf("replaced view: %s", got)
	}
	v.Start(context.Background(), "b", run("b"))
	v.Stop("b")
	if got := <-ended; got != "b" {
		t.Fatalf("stopped view: %s", got)
	}
	v.StopAll()
	if got := <-ended; got != "a2" {
		t.Fatalf("StopAll: %s", got)
	}
}

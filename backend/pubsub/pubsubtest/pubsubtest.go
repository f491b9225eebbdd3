// Package pubsubtest waits for a broker's events in tests: the event a test waits for, by its
// type and what its payload says, with a bound so a missing one fails instead of hanging.
package pubsubtest

import (
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/pubsub"
)

// Wait waits up to within for an event of type typ on ch whose payload satisfies ok (nil: any)
// and returns its payload, passing over the others. The test fails when the stream closes or
// the time passes first.
func Wait[T any](t testing.TB, ch <-chan pubsub.Event[T], typ string, within time.Duration, ok func(T) bool) T {
	t.Helper()
	timeout := time.After(within)
	for {
		select {
		case ev, open := <-ch:
			if !open {
				t.Fatalf("the event stream closed before a %s event", typ)
			}
			if ev.Type == typ && (ok == nil || ok(ev.Payload)) {
				return ev.Payload
			}
		case <-timeout:
			t.Fatalf("no %s event within %s", typ, within)
		}
	}
}

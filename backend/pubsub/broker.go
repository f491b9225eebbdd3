// Package pubsub is the typed in-process event broker. Every service publishes its changes
// here; the doors (the Wails app and the HTTP server) subscribe and forward them to a UI.
package pubsub

import (
	"context"
	"sync"
	"sync/atomic"
)

// DefaultBuffer is how many events a subscriber may fall behind before Publish starts
// dropping events for it. Large enough to absorb a burst of UI-bound changes, small enough
// that a stuck subscriber costs little memory.
const DefaultBuffer = 256

// Event is one published change: a type name such as "updated" and its payload.
type Event[T any] struct {
	Type    string
	Payload T
}

type subscriber[T any] struct {
	ch       chan Event[T]
	done     chan struct{} // closed when the subscription ends, before ch is closed
	doneOnce sync.Once
}

func (s *subscriber[T]) release() { s.doneOnce.Do(func() { close(s.done) }) }

// Broker fans events out to subscribers. Publish never blocks on a slow subscriber: it drops
// the event for that subscriber instead. PublishMust waits, for final events that must arrive.
type Broker[T any] struct {
	// mu guards subs. Senders hold it for reading while they send, and a subscriber's
	// channel is closed only under the write lock, so no send ever hits a closed channel.
	mu      sync.RWMutex
	subs    map[*subscriber[T]]struct{}
	buffer  int
	closed  bool
	dropped atomic.Uint64
	wg      sync.WaitGroup
}

// NewBroker returns a broker whose subscribers each buffer DefaultBuffer events.
func NewBroker[T any]() *Broker[T] { return NewBrokerBuffer[T](DefaultBuffer) }

// NewBrokerBuffer returns a broker whose subscribers each buffer n events (n >= 1).
func NewBrokerBuffer[T any](n int) *Broker[T] {
	if n < 1 {
		n = 1
	}
	return &Broker[T]{subs: make(map[*subscriber[T]]struct{}), buffer: n}
}

// Subscribe returns a channel of events that is closed when ctx ends or the broker shuts down.
func (b *Broker[T]) Subscribe(ctx context.Context) <-chan Event[T] {
	s := &subscriber[T]{ch: make(chan Event[T], b.buffer), done: make(chan struct{})}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		close(s.ch)
		return s.ch
	}
	b.subs[s] = struct{}{}
	b.mu.Unlock()

	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		select {
		case <-ctx.Done():
		case <-s.done: // the broker shut down
			return
		}
		b.remove(s)
	}()
	return s.ch
}

// remove unsubscribes s: first it releases senders blocked on s (done), then it closes s.ch
// under the write lock, once no sender can be holding the read lock.
func (b *Broker[T]) remove(s *subscriber[T]) {
	s.release()
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.subs[s]; !ok {
		return // Shutdown got there first and closed s.ch
	}
	delete(b.subs, s)
	close(s.ch)
}

// Publish delivers the event to every subscriber with room in its buffer and drops it for
// the others (counted in Dropped). It never blocks.
func (b *Broker[T]) Publish(typ string, payload T) {
	// Best effort: this delivery never fails, it drops.
	_ = b.each(typ, payload, func(s *subscriber[T], ev Event[T]) error {
		select {
		case s.ch <- ev:
		default:
			b.dropped.Add(1)
		}
		return nil
	})
}

// PublishMust delivers the event to every subscriber, waiting for room in each buffer, until
// the subscriber goes away or ctx ends. Use it for final events (a goal ended) that a UI must
// not miss; it returns ctx.Err() if it gave up on a live subscriber.
func (b *Broker[T]) PublishMust(ctx context.Context, typ string, payload T) error {
	return b.each(typ, payload, func(s *subscriber[T], ev Event[T]) error {
		select {
		case s.ch <- ev:
		case <-s.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		return nil
	})
}

// each hands the event to deliver once for every subscriber, under the read lock (so no
// subscriber's channel closes meanwhile), and stops at the first error.
func (b *Broker[T]) each(typ string, payload T, deliver func(*subscriber[T], Event[T]) error) error {
	ev := Event[T]{Type: typ, Payload: payload}
	b.mu.RLock()
	defer b.mu.RUnlock()
	for s := range b.subs {
		if err := deliver(s, ev); err != nil {
			return err
		}
	}
	return nil
}

// Dropped is how many events Publish has dropped for slow subscribers since the start.
func (b *Broker[T]) Dropped() uint64 { return b.dropped.Load() }

// Subscribers is the number of live subscriptions.
func (b *Broker[T]) Subscribers() int {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return len(b.subs)
}

// Shutdown closes every subscriber's channel and waits for the broker's goroutines to end.
// Publishing after Shutdown does nothing.
func (b *Broker[T]) Shutdown() {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return
	}
	b.closed = true
	subs := b.subs
	b.subs = make(map[*subscriber[T]]struct{})
	for s := range subs {
		s.release()
		close(s.ch)
	}
	b.mu.Unlock()
	b.wg.Wait()
}

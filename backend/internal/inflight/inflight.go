// Package inflight counts a service's operations in flight, so that its shutdown can refuse
// new ones and wait for those already running (the terminal and browser managers).
package inflight

import (
	"sync"
	"sync/atomic"
)

// Ops is a WaitGroup that closes: Enter counts an operation unless Close has run. The
// WaitGroup's own Add and Go count work that an operation already counted hands on (a
// goroutine it starts), which needs no check. The zero value is open.
type Ops struct {
	sync.WaitGroup
	// mu orders Enter's check and count against Close, so that no operation is counted once
	// Close has returned and its caller waits.
	mu     sync.Mutex
	closed atomic.Bool
}

// Enter counts an operation, which ends with Done; false, counting nothing, once Close has run.
func (o *Ops) Enter() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed.Load() {
		return false
	}
	o.Add(1)
	return true
}

// Close refuses every Enter from now on. It says whether this call closed it (false when an
// earlier one had); it does not wait for the operations in flight: Wait does.
func (o *Ops) Close() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.closed.CompareAndSwap(false, true)
}

// Closed says whether Close has run.
func (o *Ops) Closed() bool { return o.closed.Load() }

// Package inflight counts a service's operations in flight, so that its shutdown can refuse
// new ones and wait for those already running (the terminal and browser managers).
package inflight

import "sync"

// Ops is a WaitGroup that closes: Enter counts an operation unless Close has run. The
// WaitGroup's own Add and Go count work that an operation already counted hands on (a
// goroutine it starts), which needs no check. The zero value is open.
type Ops struct {
	sync.WaitGroup
	mu     sync.Mutex
	closed bool
}

// Enter counts an operation, which ends with Done; false, counting nothing, once Close has run.
func (o *Ops) Enter() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.closed {
		o.Add(1)
	}
	return !o.closed
}

// Close refuses every Enter from now on. It says whether this call closed it (false when an
// earlier one had); it does not wait for the operations in flight: Wait does.
func (o *Ops) Close() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	first := !o.closed
	o.closed = true
	return first
}

// Closed says whether Close has run.
func (o *Ops) Closed() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.closed
}

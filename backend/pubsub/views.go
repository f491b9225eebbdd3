package pubsub

import (
	"context"
	"sync"
)

// Views are the live streams one client watches (a terminal tab's output, a browser pane's
// frames), each under a key and each stopped by it. A door keeps one per client and stops
// them all when the client goes.
type Views struct {
	mu     sync.Mutex
	cancel map[string]context.CancelFunc
	wg     sync.WaitGroup
}

// Start runs forward in a goroutine owned by v, under key, replacing (and stopping) an earlier
// view with the same key. forward must return when its context ends.
func (v *Views) Start(parent context.Context, key string, forward func(ctx context.Context)) {
	ctx, cancel := context.WithCancel(parent)
	v.mu.Lock()
	if v.cancel == nil {
		v.cancel = map[string]context.CancelFunc{}
	}
	if old, ok := v.cancel[key]; ok {
		old()
	}
	v.cancel[key] = cancel
	v.wg.Add(1)
	v.mu.Unlock()
	go func() {
		defer v.wg.Done()
		forward(ctx)
	}()
}

// Stop ends the view under key, if any.
func (v *Views) Stop(key string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if c, ok := v.cancel[key]; ok {
		c()
		delete(v.cancel, key)
	}
}

// StopAll ends every view and waits for their goroutines.
func (v *Views) StopAll() {
	v.mu.Lock()
	for k, c := range v.cancel {
		c()
		delete(v.cancel, k)
	}
	v.mu.Unlock()
	v.wg.Wait()
}

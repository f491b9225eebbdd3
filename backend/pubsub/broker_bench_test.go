package pubsub

import (
	"context"
	"testing"
)

// BenchmarkPublish measures one Publish fanned out to four subscribers that keep up.
func BenchmarkPublish(b *testing.B) {
	br := NewBroker[int]()
	defer br.Shutdown()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for range 4 {
		ch := br.Subscribe(ctx)
		go func() {
			for range ch {
			}
		}()
	}
	b.ResetTimer()
	for i := range b.N {
		br.Publish("n", i)
	}
}

package pubsubtest_test

import (
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/pubsub"
	"github.com/clusterspace/clusterspace/backend/pubsub/pubsubtest"
)

func TestWaitPassesOverOtherEvents(t *testing.T) {
	t.Parallel()
	b := pubsub.NewBroker[int]()
	defer b.Shutdown()
	ch := b.Subscribe(t.Context())
	b.Publish("tick", 1)
	b.Publish("tock", 2)
	b.Publish("tick", 3)
	if got := pubsubtest.Wait(t, ch, "tick", time.Second, func(n int) bool { return n > 1 }); got != 3 {
		t.Fatalf("Wait = %d, want the second tick, 3", got)
	}
}

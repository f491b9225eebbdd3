package inflight

import (
	"sync/atomic"
	"testing"
	"time"
)

func TestCloseRefusesNewOperationsAndWaitWaitsForRunningOnes(t *testing.T) {
	t.Parallel()
	var ops Ops
	if ops.Closed() || !ops.Enter() {
		t.Fatal("a new Ops refused an operation")
	}
	var finished atomic.Bool
	go func() {
		defer ops.Done()
		time.Sleep(50 * time.Millisecond)
		finished.Store(true)
	}()
	if !ops.Close() || ops.Close() {
		t.Fatal("Close did not say which call closed it")
	}
	if !ops.Closed() || ops.Enter() {
		t.Fatal("a closed Ops counted an operation")
	}
	ops.Wait()
	if !finished.Load() {
		t.Fatal("Wait returned before the operation in flight ended")
	}
}

package syncbuf

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// Lines written from many goroutines while another reads all arrive whole (run with -race).
func TestConcurrentWritesArriveWhole(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				fmt.Fprintf(&b, "g%d line %d\n", g, i)
			}
		}()
	}
	for range 50 {
		_ = b.String()
		_ = b.Bytes()
	}
	wg.Wait()
	if n := strings.Count(b.String(), "\n"); n != 800 || len(b.Bytes()) != len(b.String()) {
		t.Fatalf("%d lines, want 800", n)
	}
}

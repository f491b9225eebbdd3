package terminal_test

import (
	"bytes"
	"context"
	"slices"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/terminal"
)

// A person typing at a prompt sees each key's echo at once: the output that follows typed input
// is handed to the viewer as soon as it arrives, not held until the output has been quiet for a
// while (the batching that suits a fast stream). Keys come a few ms apart, closer than a frame,
// as when typing fast; without the rule every echo waited out the quiet gap (1 ms) first.
func TestEchoOfTypedKeysIsNotHeldForQuiet(t *testing.T) {
	m := newManager(t, terminal.Options{})
	tab := openBash(t, m, bashSpec(t, "pane-echo1"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, out, err := m.Attach(ctx, tab.PaneID, "")
	if err != nil {
		t.Fatal(err)
	}
	const keys = 40
	var took []time.Duration
	for i := range keys {
		key, want := []byte("x"), []byte("x")
		if i%2 == 1 {
			key, want = []byte{0x7f}, []byte("\b") // readline rubs out with a backspace
		}
		start := time.Now()
		if err := m.Write(tab.PaneID, "", key); err != nil {
			t.Fatal(err)
		}
		deadline := time.After(5 * time.Second)
	wait:
		for {
			select {
			case c := <-out:
				if bytes.Contains(c.Data, want) {
					break wait
				}
			case <-deadline:
				t.Fatalf("key %d: no echo in 5 s", i)
			}
		}
		took = append(took, time.Since(start))
		time.Sleep(4 * time.Millisecond)
	}
	slices.Sort(took)
	median := took[len(took)/2]
	t.Logf("echo after a typed key: median %v, slowest %v", median, took[len(took)-1])
	if median >= time.Millisecond {
		t.Errorf("the median echo took %v: typed keys' echoes are being held for the quiet gap", median)
	}
}

package browser_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/clusterspace/clusterspace/backend/browser"
)

// The steps the manager's tests and benchmarks share.

// openPage opens pane on url, in workspace "ws", failing the test if it cannot.
func openPage(tb testing.TB, m *browser.Manager, ctx context.Context, pane, url string) {
	tb.Helper()
	if _, err := m.Open(ctx, pane, "ws", url); err != nil {
		tb.Fatal(err)
	}
}

// castPage opens pane "p" on url and starts its screencast.
func castPage(tb testing.TB, m *browser.Manager, ctx context.Context, url string) <-chan browser.Frame {
	tb.Helper()
	openPage(tb, m, ctx, "p", url)
	frames, err := m.StartScreencast(ctx, "p")
	if err != nil {
		tb.Fatal(err)
	}
	return frames
}

// countFrames starts a screencast of each pane and counts the frames each delivers, until
// ctx ends.
func countFrames(tb testing.TB, m *browser.Manager, ctx context.Context, panes []string) []atomic.Int64 {
	tb.Helper()
	counts := make([]atomic.Int64, len(panes))
	for i, p := range panes {
		frames, err := m.StartScreencast(ctx, p)
		if err != nil {
			tb.Fatal(err)
		}
		go func() {
			for range frames {
				counts[i].Add(1)
			}
		}()
	}
	return counts
}

package browser_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/browser"
	"github.com/clusterspace/clusterspace/backend/browser/browsertest"
)

// The steps the manager's tests and benchmarks share.

// pagesFor bounds a test's calls to the browser: a hung page fails the test instead of
// holding it until the package's timeout.
const pagesFor = 30 * time.Second

// newPages starts a manager over a real Chromium and the test site, with a context for their
// calls that ends with the test (after limit, if limit > 0; a benchmark runs as long as it needs).
func newPages(tb testing.TB, limit time.Duration) (*browser.Manager, *browsertest.Site, context.Context) {
	tb.Helper()
	m, _ := browsertest.NewManager(tb)
	site := browsertest.NewSite(tb)
	ctx, cancel := context.WithCancel(context.Background())
	if limit > 0 {
		ctx, cancel = context.WithTimeout(context.Background(), limit)
	}
	tb.Cleanup(cancel)
	return m, site, ctx
}

// testCtx is a context for a test's calls to the browser, ending with the test.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), pagesFor)
	t.Cleanup(cancel)
	return ctx
}

// openPage opens pane on url, in workspace "ws", failing the test if it cannot.
func openPage(tb testing.TB, m *browser.Manager, ctx context.Context, pane, url string) {
	tb.Helper()
	if _, err := m.Open(ctx, pane, "ws", url); err != nil {
		tb.Fatal(err)
	}
}

// startCast starts pane's screencast, until ctx ends, failing the test if it cannot.
func startCast(tb testing.TB, m *browser.Manager, ctx context.Context, pane string) <-chan browser.Frame {
	tb.Helper()
	frames, err := m.StartScreencast(ctx, pane)
	if err != nil {
		tb.Fatal(err)
	}
	return frames
}

// castPage opens pane "p" on url and starts its screencast.
func castPage(tb testing.TB, m *browser.Manager, ctx context.Context, url string) <-chan browser.Frame {
	tb.Helper()
	openPage(tb, m, ctx, "p", url)
	return startCast(tb, m, ctx, "p")
}

// countFrames starts a screencast of each pane and counts the frames each delivers, until
// ctx ends.
func countFrames(tb testing.TB, m *browser.Manager, ctx context.Context, panes []string) []atomic.Int64 {
	tb.Helper()
	counts := make([]atomic.Int64, len(panes))
	for i, p := range panes {
		frames := startCast(tb, m, ctx, p)
		go func() {
			for range frames {
				counts[i].Add(1)
			}
		}()
	}
	return counts
}

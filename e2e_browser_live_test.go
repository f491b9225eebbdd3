package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/clusterspace/clusterspace/backend/browser/browsertest"
)

// TestTwoBrowserPanesBothAnimate opens an animated page in two browser panes of one workspace
// in the served UI and counts the frames each pane's canvas draws: both must keep moving, not
// only the one opened last (a headless Chromium paints only its foreground page unless each
// page is made to behave as focused).
func TestTwoBrowserPanesBothAnimate(t *testing.T) {
	site := browsertest.NewSite(t)
	_, ctx := openApp(t)
	state := readState(t, ctx)
	panes := []string{state.Panes[0].ID, state.Panes[1].ID}
	views := make([]string, len(panes))
	for i, pane := range panes {
		paneSelector := paneSel(pane)
		views[i] = fmt.Sprintf(`[data-testid=browser-view][data-pane-id=%q]`, pane)
		step(t, ctx, "make pane "+pane+" a browser pane",
			chromedp.Click(paneSelector+` [data-testid=pane-kind-toggle]`),
			waitJS(fmt.Sprintf(`document.querySelector(%q)?.dataset.kind === 'browser'`, paneSelector)),
			chromedp.WaitVisible(views[i]))
		// The workspace's Chromium starts with the first browser pane: slow on a loaded machine.
		var started bool
		step(t, ctx, "wait for the pane's browser to start", chromedp.Poll(
			fmt.Sprintf(`document.querySelector(%q)?.disabled === false`, paneSelector+` [data-testid=browser-url]`),
			&started, chromedp.WithPollingTimeout(19*time.Second), chromedp.WithPollingInterval(100*time.Millisecond)))
		step(t, ctx, "open the animated page in "+pane,
			chromedp.SendKeys(paneSelector+` [data-testid=browser-url]`, strings.Repeat(kb.Backspace, 80)+site.Page("/animated")+kb.Enter),
			waitJS(fmt.Sprintf(`(document.querySelector(%q)?.textContent ?? '').includes('Animated')`, paneSelector+` [data-testid=browser-title]`)),
			waitJS(fmt.Sprintf(`Number(document.querySelector(%q)?.dataset.frames ?? 0) > 0`, views[i])))
	}
	frames := func() []int {
		out := make([]int, len(views))
		for i, v := range views {
			step(t, ctx, "count frames", chromedp.Evaluate(fmt.Sprintf(`Number(document.querySelector(%q)?.dataset.frames ?? 0)`, v), &out[i]))
		}
		return out
	}
	before := frames()
	const window = 4 * time.Second
	time.Sleep(window)
	after := frames()
	best := 0
	for i := range views {
		best = max(best, after[i]-before[i])
	}
	shot(t, ctx, "two-browser-panes")
	for i, pane := range panes {
		got := after[i] - before[i]
		t.Logf("pane %s drew %d frames in %v (%.1f fps)", pane, got, window, float64(got)/window.Seconds())
		// A frozen page draws none; on a loaded machine the rates drop together, so the
		// floor is a few frames and no pane far behind the other.
		if got < 3 || got < best/4 {
			t.Errorf("pane %s drew %d frames in %v while the other drew %d: its page is not painted", pane, got, window, best)
		}
	}
}

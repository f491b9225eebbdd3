package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/clusterspace/clusterspace/backend/browser/browsertest"
)

// TestBrowserPaneEndToEnd turns a pane into a browser pane in the UI (headless Chromium against
// `clusterspace serve`), loads a local page through the URL bar, sees its screencast drawn on
// the pane's canvas, and clicks the canvas: the page's handler, which only counts trusted
// clicks, must see it. Two Chromiums take part: the test's (the user's browser) and the
// server's (the one the pane drives).
func TestBrowserPaneEndToEnd(t *testing.T) {
	var trustedClicks atomic.Int32
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/clicked" {
			trustedClicks.Add(1)
			return
		}
		if r.URL.Path == "/private" {
			if u, p, ok := r.BasicAuth(); !ok || u != "ada" || p != "e2e-pw" {
				w.Header().Set("WWW-Authenticate", `Basic realm="staging"`)
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			fmt.Fprint(w, `<title>Private area</title>welcome`)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<title>Local page</title><body style="margin:0">
<button id=b style="position:fixed;inset:0;width:100%;height:100%;font-size:40px"
 onclick="if (event.isTrusted) fetch('/clicked')">Click anywhere</button>`)
	}))
	defer page.Close()

	_, ctx := openApp(t)
	pane := readState(t, ctx).Panes[1].ID
	paneSelector := fmt.Sprintf(`[data-testid=pane][data-pane-id=%q]`, pane)
	view := fmt.Sprintf(`[data-testid=browser-view][data-pane-id=%q]`, pane)
	step(t, ctx, "make the pane a browser pane",
		chromedp.Click(paneSelector+` [data-testid=pane-kind-toggle]`),
		waitJS(fmt.Sprintf(`document.querySelector(%q)?.dataset.kind === 'browser'`, paneSelector)),
		chromedp.WaitVisible(view))
	step(t, ctx, "wait for the pane's browser to start",
		waitJS(fmt.Sprintf(`document.querySelector(%q)?.disabled === false`, paneSelector+` [data-testid=browser-url]`)))
	step(t, ctx, "load the local page from the URL bar",
		chromedp.SendKeys(paneSelector+` [data-testid=browser-url]`, strings.Repeat(kb.Backspace, 40)+page.URL+kb.Enter),
		waitJS(fmt.Sprintf(`(document.querySelector(%q)?.textContent ?? '').includes('Local page')`, paneSelector+` [data-testid=browser-title]`)),
		waitJS(fmt.Sprintf(`Number(document.querySelector(%q)?.dataset.frames ?? 0) > 0`, view)))
	shot(t, ctx, "browser-pane")
	step(t, ctx, "click the canvas", chromedp.Click(view))
	waitFor(t, "the page counted a trusted click", func() bool { return trustedClicks.Load() > 0 })

	// A page behind HTTP authentication: the pane asks the person, not the agent.
	prompt := paneSelector + ` [data-testid=browser-prompt]`
	step(t, ctx, "open a page that asks to sign in",
		chromedp.SendKeys(paneSelector+` [data-testid=browser-url]`, strings.Repeat(kb.Backspace, 80)+page.URL+"/private"+kb.Enter),
		chromedp.WaitVisible(prompt),
		waitJS(fmt.Sprintf(`document.querySelector(%q).textContent.includes('asks you to sign in (“staging”)')`, prompt)))
	step(t, ctx, "sign in",
		chromedp.SendKeys(prompt+` [data-testid=browser-prompt-user]`, "ada"),
		chromedp.SendKeys(prompt+` [data-testid=browser-prompt-password]`, "e2e-pw"+kb.Enter),
		waitJS(fmt.Sprintf(`(document.querySelector(%q)?.textContent ?? '').includes('Private area')`, paneSelector+` [data-testid=browser-title]`)),
		waitJS(fmt.Sprintf(`document.querySelector(%q) === null`, prompt)))
}

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

// A new browser pane opens on a blank page with the cursor in its URL bar: the address can be
// typed at once.
func TestNewBrowserPaneFocusesItsURLBar(t *testing.T) {
	srv := startServe(t, t.TempDir(), e2ePassword)
	token, pane := makeBrowserPane(t, srv)
	// The keyboard starts in the workspace's focused pane (else the top-left one): this one.
	apiCall(t, "PUT", srv.URL+"/api/workspaces/"+firstWorkspace(t, srv, token).ID+"/focus", token, map[string]string{"paneId": pane}, nil)
	ctx := newBrowser(t)
	logIn(t, ctx, srv.URL, e2ePassword)
	step(t, ctx, "the URL bar of the new browser pane has the focus",
		waitJS(fmt.Sprintf(`document.activeElement?.dataset.testid === 'browser-url' && !!document.activeElement.closest('[data-pane-id=%q]')`, pane)))
}

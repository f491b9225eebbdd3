package browser_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image"
	"image/jpeg"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/browser"
	"github.com/clusterspace/clusterspace/backend/browser/browsertest"
	"github.com/clusterspace/clusterspace/backend/pubsub"
	"github.com/clusterspace/clusterspace/backend/pubsub/pubsubtest"
)

// waitEvent waits for an event of kind (on pane, if the event has one) that satisfies ok.
func waitEvent(t *testing.T, events <-chan pubsub.Event[browser.Event], kind string, ok func(browser.Event) bool) browser.Event {
	t.Helper()
	return pubsubtest.Wait(t, events, kind, 15*time.Second, ok)
}

// text evaluates a JS expression that yields a string on the pane's page.
func text(t *testing.T, m *browser.Manager, pane, expr string) string {
	t.Helper()
	v, err := m.Evaluate(testCtx(t), pane, expr)
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		t.Fatalf("%s is not a string: %s", expr, v)
	}
	return s
}

func TestTabsAndEvents(t *testing.T) {
	m, site, ctx := newPages(t, pagesFor)
	events := m.Events().Subscribe(ctx)

	first, err := m.Open(ctx, "p", "ws", site.Page("/form"))
	if err != nil || first.Title != "Form" || !first.Active || first.URL != site.Page("/form") {
		t.Fatalf("open: %+v %v", first, err)
	}
	waitEvent(t, events, browser.EventOpened, nil)
	waitEvent(t, events, browser.EventTitle, func(e browser.Event) bool { return e.Tab.Title == "Form" })
	second, err := m.NewTab(ctx, "p", site.Page("/list"))
	if err != nil || second.Title != "List" {
		t.Fatalf("new tab: %+v %v", second, err)
	}
	waitEvent(t, events, browser.EventActivated, func(e browser.Event) bool { return e.Tab.TabID == second.TabID })
	tabs := m.Tabs("p")
	if len(tabs) != 2 || tabs[0].Active || !tabs[1].Active {
		t.Fatalf("tabs: %+v", tabs)
	}
	// Actions follow the active tab.
	if p, _ := m.Page("p"); p.Title != "List" {
		t.Fatalf("active page %+v", p)
	}
	if _, err := m.Activate(ctx, "p", first.TabID); err != nil {
		t.Fatal(err)
	}
	if p, _ := m.Page("p"); p.Title != "Form" {
		t.Fatalf("after activate: %+v", p)
	}
	if err := m.CloseTab("p", first.TabID); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, events, browser.EventClosed, func(e browser.Event) bool { return e.Tab.TabID == first.TabID })
	if tabs := m.Tabs("p"); len(tabs) != 1 || !tabs[0].Active || tabs[0].TabID != second.TabID {
		t.Fatalf("after close: %+v", tabs)
	}

	// Unknown panes and tabs name what exists.
	if _, err := m.Navigate(ctx, "ghost", site.Page("/")); !errors.Is(err, browser.ErrNoPane) || !strings.Contains(err.Error(), "the browser panes are p") {
		t.Fatalf("ghost pane: %v", err)
	}
	if _, err := m.Activate(ctx, "p", "nope"); !errors.Is(err, browser.ErrNoTab) {
		t.Fatalf("ghost tab: %v", err)
	}
	if err := m.SetViewport("p", 0, 10); err == nil {
		t.Fatal("a 0-wide viewport was accepted")
	}
	if err := m.SetViewport("p", 800, 600); err != nil {
		t.Fatal(err)
	}
	if shot, err := m.SaveScreenshot(ctx, "p", false); err != nil || shot.Width != 800 || shot.Height != 600 {
		t.Fatalf("viewport screenshot %dx%d %v", shot.Width, shot.Height, err)
	}
	m.ClosePane("p")
	if len(m.Panes()) != 0 {
		t.Fatalf("panes after ClosePane: %v", m.Panes())
	}
}

// Two openers racing for one pane's first page (the window's view mounting while a conversion
// opens it) leave the pane with one tab, not two; a pane that has a tab is left alone.
func TestEnsureOpensOneFirstTab(t *testing.T) {
	m, site, ctx := newPages(t, pagesFor)
	const racers = 4
	opened := make(chan bool, racers)
	errs := make(chan error, racers)
	for range racers {
		go func() {
			_, o, err := m.Ensure(ctx, "p", "ws", site.Page("/form"))
			opened <- o
			errs <- err
		}()
	}
	openers := 0
	for range racers {
		if <-opened {
			openers++
		}
		if err := <-errs; err != nil {
			t.Fatalf("ensure: %v", err)
		}
	}
	if tabs := m.Tabs("p"); openers != 1 || len(tabs) != 1 || tabs[0].Title != "Form" {
		t.Fatalf("%d callers opened a page; the pane has %+v; want one Form tab", openers, tabs)
	}
	if _, o, err := m.Ensure(ctx, "p", "ws", site.Page("/list")); o || err != nil || len(m.Tabs("p")) != 1 {
		t.Fatalf("ensure on a pane with a tab: opened=%v err=%v tabs=%+v", o, err, m.Tabs("p"))
	}
}

func TestScreencast(t *testing.T) {
	m, site, ctx := newPages(t, pagesFor)
	static, err := m.Open(ctx, "p", "ws", site.Page("/form"))
	if err != nil {
		t.Fatal(err)
	}
	watch, stop := context.WithCancel(ctx)
	frames := startCast(t, m, watch, "p")
	// A static page sends no frames of its own: the viewer gets the page as it is.
	f := nextFrame(t, frames)
	if f.TabID != static.TabID || f.Width != browser.DefaultWidth {
		t.Fatalf("first frame %+v", f)
	}
	if _, err := jpeg.Decode(bytes.NewReader(f.Data)); err != nil {
		t.Fatalf("the frame is not a JPEG: %v", err)
	}
	// The cast follows the active tab; an animated page streams.
	anim, err := m.NewTab(ctx, "p", site.Page("/animated"))
	if err != nil {
		t.Fatal(err)
	}
	// Streaming is the point here, not the rate (make bench measures that): a loaded machine
	// under the race detector may deliver well under the usual 60 fps.
	n := 0
	start := time.Now()
	deadline := start.Add(5 * time.Second)
	for n < 10 && time.Now().Before(deadline) {
		if f := nextFrame(t, frames); f.TabID == anim.TabID {
			n++
		}
	}
	if n < 10 {
		t.Fatalf("only %d frames of the animated tab in %s", n, time.Since(start).Round(time.Millisecond))
	}
	// A second viewer gets the latest frame at once.
	other := startCast(t, m, watch, "p")
	nextFrame(t, other)
	stop()
	for range frames { // drains, then ends: the channel closes when the viewer leaves
	}
	if _, err := m.StartScreencast(ctx, "ghost"); !errors.Is(err, browser.ErrNoPane) {
		t.Fatalf("ghost pane: %v", err)
	}
}

// Past the casts a machine carries at full size, every cast is scaled down so all panes stay
// live, and a cast grows back when the crowd thins. (FullSizeCasts is one here, so that two
// casts make a crowd on any machine.)
func TestCrowdedCastsShrinkAndGrowBack(t *testing.T) {
	m, _ := browsertest.NewManagerWith(t, browser.Options{FullSizeCasts: 1})
	site := browsertest.NewSite(t)
	ctx := testCtx(t)
	for _, p := range []string{"p1", "p2"} {
		openPage(t, m, ctx, p, site.Page("/animated"))
		if err := m.SetViewport(p, 940, 480); err != nil {
			t.Fatal(err)
		}
	}
	// waitPicture reads frames until one's picture satisfies ok, and returns its size.
	waitPicture := func(frames <-chan browser.Frame, what string, ok func(w, h int) bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		var last image.Point
		for time.Now().Before(deadline) {
			f := nextFrame(t, frames)
			cfg, err := jpeg.DecodeConfig(bytes.NewReader(f.Data))
			if err != nil {
				t.Fatalf("the frame is not a JPEG: %v", err)
			}
			if f.Width != 940 || f.Height != 480 {
				t.Fatalf("the frame's viewport is %dx%d, want the pane's 940x480 whatever the picture's size", f.Width, f.Height)
			}
			last = image.Pt(cfg.Width, cfg.Height)
			if ok(cfg.Width, cfg.Height) {
				return
			}
		}
		t.Fatalf("no %s picture in 10 s; the last was %v", what, last)
	}
	full := func(w, h int) bool { return w == 940 && h == 480 }
	crowded := func(w, h int) bool {
		// Scaled down under Chromium's reusable frame buffers, keeping the pane's shape.
		return w*h <= 225_000 && w >= 600 && math.Abs(float64(w)/float64(h)-940.0/480) < 0.02
	}
	one := startCast(t, m, ctx, "p1")
	waitPicture(one, "full-size", full)
	watch2, stop2 := context.WithCancel(ctx)
	two := startCast(t, m, watch2, "p2")
	waitPicture(two, "scaled-down", crowded)
	waitPicture(one, "scaled-down", crowded)
	stop2()
	waitPicture(one, "full-size again", full)
}

func nextFrame(t *testing.T, frames <-chan browser.Frame) browser.Frame {
	t.Helper()
	select {
	case f, ok := <-frames:
		if !ok {
			t.Fatal("the screencast ended")
		}
		return f
	case <-time.After(10 * time.Second):
		t.Fatal("no screencast frame")
	}
	return browser.Frame{}
}

func TestInputFromThePaneIsTrusted(t *testing.T) {
	m, site, ctx := newPages(t, pagesFor)
	openPage(t, m, ctx, "p", site.Page("/trusted"))
	center := func(sel string) []float64 {
		v, err := m.Evaluate(ctx, "p", "const r = document.querySelector('"+sel+"').getBoundingClientRect(); [r.left + r.width/2, r.top + r.height/2]")
		var xy []float64
		if err != nil || json.Unmarshal(v, &xy) != nil || len(xy) != 2 {
			t.Fatalf("centre of %s: %s %v", sel, v, err)
		}
		return xy
	}
	btn, field := center("#btn"), center("#field")
	for _, ev := range []browser.InputEvent{
		{Type: browser.InputMouseMove, X: btn[0], Y: btn[1]},
		{Type: browser.InputClick, X: btn[0], Y: btn[1]},
		{Type: browser.InputDblClick, X: btn[0], Y: btn[1]},
		{Type: browser.InputClick, X: field[0], Y: field[1]},
		{Type: browser.InputKeyDown, Key: "x", Code: "KeyX"},
		{Type: browser.InputKeyUp, Key: "x", Code: "KeyX"},
		{Type: browser.InputKeyDown, Key: "Enter"},
		{Type: browser.InputKeyUp, Key: "Enter"},
		{Type: browser.InputText, Text: "ü"},
		{Type: browser.InputWheel, X: 10, Y: 10, DeltaY: 50},
	} {
		if err := m.Input("p", ev); err != nil {
			t.Fatalf("%+v: %v", ev, err)
		}
	}
	time.Sleep(100 * time.Millisecond)
	log := text(t, m, "p", "document.getElementById('log').textContent")
	for _, want := range []string{"click trusted=true", "dblclick trusted=true", "keydown x trusted=true", "keydown Enter trusted=true", "input trusted=true", "wheel trusted=true"} {
		if !strings.Contains(log, want) {
			t.Errorf("the page did not see %q:\n%s", want, log)
		}
	}
	if strings.Contains(log, "trusted=false") {
		t.Errorf("an untrusted event:\n%s", log)
	}
	if v := text(t, m, "p", "document.getElementById('field').value"); v != "xü" {
		t.Errorf("field = %q, want xü", v)
	}
	if err := m.Input("p", browser.InputEvent{Type: "teleport"}); err == nil {
		t.Error("an unknown input type was accepted")
	}
	if err := m.Input("p", browser.InputEvent{Type: browser.InputKeyDown, Key: "Hyperspace"}); err == nil {
		t.Error("an unknown key was accepted")
	}
}

func TestBrowserDeathAndReconnect(t *testing.T) {
	m, site, ctx := newPages(t, pagesFor)
	events := m.Events().Subscribe(ctx)
	openPage(t, m, ctx, "p", site.Page("/list"))

	// The page's renderer crashes: the tab says so until it is reconnected.
	m.Navigate(ctx, "p", "chrome://crash") // Best effort: the navigation dies with the renderer.
	ev := waitEvent(t, events, browser.EventCrashed, nil)
	if !ev.Tab.Crashed || ev.Detail != "the page's renderer crashed" {
		t.Fatalf("crash event %+v", ev)
	}
	if _, err := m.Click(ctx, "p", browser.Locator{Text: "Add item"}); !errors.Is(err, browser.ErrCrashed) {
		t.Fatalf("acting on a crashed tab: %v", err)
	}
	if info, err := m.Reconnect(ctx, "p"); err != nil || info.Crashed || info.Title != "List" {
		t.Fatalf("reconnect after a renderer crash: %+v %v", info, err)
	}

	// The whole browser dies: every tab of it is crashed, and reconnecting starts a new one.
	d, err := m.Doctor(ctx, "p")
	if err != nil || !d.Alive || !d.CDP || !d.JS || d.PID == 0 {
		t.Fatalf("doctor: %+v %v", d, err)
	}
	syscall.Kill(d.PID, syscall.SIGKILL)
	ev = waitEvent(t, events, browser.EventCrashed, nil)
	if !ev.Tab.Crashed {
		t.Fatalf("crash event %+v", ev)
	}
	if _, err := m.Content(ctx, "p", 0, 100); !errors.Is(err, browser.ErrCrashed) || !strings.Contains(err.Error(), "reconnect") {
		t.Fatalf("acting on a dead tab: %v", err)
	}
	if dead, _ := m.Doctor(ctx, "p"); dead.Alive || len(dead.Problems) == 0 {
		t.Fatalf("doctor on a dead tab: %+v", dead)
	}
	info, err := m.Reconnect(ctx, "p")
	if err != nil || info.Crashed || info.URL != site.Page("/list") || info.Title != "List" {
		t.Fatalf("reconnect: %+v %v", info, err)
	}
	waitEvent(t, events, browser.EventReconnected, nil)
	if c, err := m.Content(ctx, "p", 0, 100); err != nil || !strings.Contains(c.Text, "Item 1") {
		t.Fatalf("after reconnect: %+v %v", c, err)
	}
	if d2, _ := m.Doctor(ctx, "p"); d2.PID == 0 || d2.PID == d.PID || !d2.JS {
		t.Fatalf("no new browser: %+v", d2)
	}
}

func TestDownloadsPopupsAndDialogs(t *testing.T) {
	m, site, ctx := newPages(t, pagesFor)
	events := m.Events().Subscribe(ctx)
	openPage(t, m, ctx, "p", site.Page("/nav"))
	if _, err := m.Click(ctx, "p", browser.Locator{Selector: "#download"}); err != nil {
		t.Fatal(err)
	}
	ev := waitEvent(t, events, browser.EventDownload, nil)
	if ev.Detail != filepath.Join(m.DownloadsDir(), "report.txt") {
		t.Fatalf("download at %q", ev.Detail)
	}
	if data, err := os.ReadFile(ev.Detail); err != nil || string(data) != "downloaded content\n" {
		t.Fatalf("downloaded %q, %v", data, err)
	}

	// A target=_blank link opens a tab of the same pane.
	if _, err := m.Click(ctx, "p", browser.Locator{Selector: "#blank"}); err != nil {
		t.Fatal(err)
	}
	opened := waitEvent(t, events, browser.EventActivated, func(e browser.Event) bool { return len(m.Tabs("p")) == 2 && e.Tab.TabID != m.Tabs("p")[0].TabID })
	if _, _, err := m.WaitNavigation(ctx, "p", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if tabs := m.Tabs("p"); len(tabs) != 2 || !tabs[1].Active || tabs[1].TabID != opened.Tab.TabID {
		t.Fatalf("tabs after the popup: %+v", tabs)
	}
	if _, err := m.WaitForText(ctx, "p", "Welcome to the test site", 5*time.Second); err != nil {
		t.Fatal(err)
	}

	// A confirm() is answered so the page does not hang; the log says what it asked.
	if _, err := m.Navigate(ctx, "p", site.Page("/dialog")); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Click(ctx, "p", browser.Locator{Selector: "#ask"}); err != nil {
		t.Fatal(err)
	}
	if ok, _ := m.WaitForText(ctx, "p", "yes", 5*time.Second); !ok {
		t.Fatal("the confirm was not accepted")
	}
	log, _ := m.ActionLog("p", 0)
	found := false
	for _, a := range log {
		found = found || (a.Action == "dialog" && strings.Contains(a.Detail, `"Really?" accepted`))
	}
	if !found {
		t.Fatalf("no dialog in the action log: %+v", log)
	}
}

func TestCookiesSurviveARestart(t *testing.T) {
	site := browsertest.NewSite(t)
	dir, err := os.MkdirTemp("", "clusterspace-browser-profile-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for range 30 {
			if os.RemoveAll(dir) == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	ctx := testCtx(t)
	m := browser.NewManager(browser.Options{DataDir: dir})
	if _, err := m.Open(ctx, "p", "ws", site.Page("/set-cookie")); err != nil {
		m.Shutdown()
		t.Fatal(err)
	}
	m.Shutdown()
	if _, err := m.Open(ctx, "p", "ws", site.Page("/")); !errors.Is(err, browser.ErrClosed) {
		t.Fatalf("open after shutdown: %v", err)
	}

	m2 := browser.NewManager(browser.Options{DataDir: dir})
	defer m2.Shutdown()
	if _, err := m2.Open(ctx, "p", "ws", site.Page("/")); err != nil {
		t.Fatal(err)
	}
	cookies, err := m2.Cookies(ctx, "p", nil)
	if err != nil || len(cookies) != 1 || cookies[0].Name != "session" || cookies[0].Value != "abc123" {
		t.Fatalf("cookies after a restart: %+v %v", cookies, err)
	}
	// Another workspace has its own profile.
	if _, err := m2.Open(ctx, "q", "other", site.Page("/")); err != nil {
		t.Fatal(err)
	}
	if cookies, _ := m2.Cookies(ctx, "q", nil); len(cookies) != 0 {
		t.Fatalf("workspace profiles share cookies: %+v", cookies)
	}
}

func TestIdleBackgroundTabsAreDiscarded(t *testing.T) {
	site := browsertest.NewSite(t)
	dir, _ := os.MkdirTemp("", "clusterspace-browser-idle-")
	t.Cleanup(func() { time.Sleep(200 * time.Millisecond); os.RemoveAll(dir) })
	m := browser.NewManager(browser.Options{DataDir: dir, IdleDiscard: 300 * time.Millisecond})
	t.Cleanup(m.Shutdown)
	ctx := testCtx(t)
	events := m.Events().Subscribe(ctx)
	bg, err := m.Open(ctx, "p", "ws", site.Page("/list"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.NewTab(ctx, "p", site.Page("/form")); err != nil {
		t.Fatal(err)
	}
	ev := waitEvent(t, events, browser.EventDiscarded, nil)
	if ev.Tab.TabID != bg.TabID || !ev.Tab.Discarded || ev.Tab.URL != site.Page("/list") {
		t.Fatalf("discarded %+v", ev.Tab)
	}
	// The active tab is never discarded; the discarded one reloads when shown.
	if tabs := m.Tabs("p"); tabs[1].Discarded {
		t.Fatalf("the active tab was discarded: %+v", tabs)
	}
	info, err := m.Activate(ctx, "p", bg.TabID)
	if err != nil || info.Discarded || info.Title != "List" {
		t.Fatalf("activate a discarded tab: %+v %v", info, err)
	}
	if c, err := m.Content(ctx, "p", 0, 100); err != nil || !strings.Contains(c.Text, "Item 2") {
		t.Fatalf("content after reload: %+v %v", c, err)
	}
}

// A pane someone watches keeps getting frames after its crashed tab is reconnected.
func TestWatchedTabResumesFramesAfterReconnect(t *testing.T) {
	m, site, ctx := newPages(t, pagesFor)
	events := m.Events().Subscribe(ctx)
	frames := castPage(t, m, ctx, site.Page("/list"))
	nextFrame := func(what string) {
		t.Helper()
		select {
		case <-frames:
		case <-time.After(10 * time.Second):
			t.Fatalf("no frame %s", what)
		}
	}
	nextFrame("before the crash")
	m.Navigate(ctx, "p", "chrome://crash") // Best effort: the navigation dies with the renderer.
	waitEvent(t, events, browser.EventCrashed, nil)
	for len(frames) > 0 { // drop what arrived before the crash
		<-frames
	}
	if _, err := m.Reconnect(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	nextFrame("after the reconnect")
}

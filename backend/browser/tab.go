package browser

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/inspector"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// Sizes of the queues between chromedp's event loop and a tab's worker. The event loop must
// never block, so a full queue drops (events) or acknowledges without showing (frames).
const (
	eventQueue = 512
	frameQueue = 8
)

// tab is one pane tab. Its page (conn) can be replaced: after a crash (Reconnect) or when a
// discarded background tab is activated again; the tab keeps its id, URL and title.
type tab struct {
	m      *Manager
	id     string
	paneID string
	ws     string

	mu         sync.Mutex
	conn       *conn // nil while discarded
	url, title string
	status     int // HTTP status of the main document, 0 if unknown
	loading    bool
	crashed    bool
	crashWhy   string
	closing    bool
	active     bool
	canBack    bool
	canForward bool
	navSeq     uint64 // main-frame navigations (including same-document ones)
	loadSeq    uint64 // main-frame loads finished
	markSeq    uint64 // navSeq when the last agent action started (see waitNavigation)
	lastUsed   time.Time
	money      string  // why the page looks like it spends money, "" if it does not
	prompt     *Prompt // the question the page waits on the person for, if any
	certErr    string  // a certificate error the next main-frame navigation shows
	width      int
	height     int
	casting    bool
	castSize   size // the frame size the running screencast was started with
	lastFrame  *Frame
	changed    chan struct{} // closed and replaced on every state change
	uploads    string        // the folder of private copies its file inputs hold (see SetFiles)
}

// conn is the live page target of a tab and the worker serving its events.
type conn struct {
	prof   *profile
	ctx    context.Context // chromedp context of the target
	cancel context.CancelFunc
	id     target.ID
	evc    chan any
	frames chan *page.EventScreencastFrame
	done   chan struct{}
}

// downloadEnded is posted to a tab when a download it started ends.
type downloadEnded struct {
	name     string
	progress *cdpbrowser.EventDownloadProgress
}

// ID is the tab's id, by which its pane finds it.
func (t *tab) ID() string { return t.id }

func newTab(m *Manager, id, paneID, ws string, w, h int) *tab {
	return &tab{m: m, id: id, paneID: paneID, ws: ws, width: w, height: h, lastUsed: time.Now(), changed: make(chan struct{})}
}

// connect opens a page target for the tab (or attaches to an existing one, for popups) and
// starts its worker. The tab must have no live conn.
func (t *tab) connect(ctx context.Context, prof *profile, existing target.ID) error {
	var opts []chromedp.ContextOption
	if existing != "" {
		opts = append(opts, chromedp.WithTargetID(existing))
	}
	cctx, cancel := chromedp.NewContext(prof.rootCtx, opts...)
	c := &conn{prof: prof, ctx: cctx, cancel: cancel, evc: make(chan any, eventQueue),
		frames: make(chan *page.EventScreencastFrame, frameQueue), done: make(chan struct{})}
	chromedp.ListenTarget(cctx, func(ev any) {
		if !t.listenPrompts(c, ev) {
			c.listen(ev)
		}
	})
	t.mu.Lock()
	w, h := t.width, t.height
	t.mu.Unlock()
	// The first Run binds the target to cctx, so it gets no deadline of its own; the wait
	// bounds it instead.
	err := awaitRun(ctx, opTimeout, "the browser did not open a page", func() error {
		// Focus emulation makes the page behave as the focused, visible one whatever else is
		// open: headless Chromium paints only its foreground page, so without it every browser
		// pane of a workspace but the last opened showed a frozen picture.
		return chromedp.Run(cctx, emulation.SetDeviceMetricsOverride(int64(w), int64(h), 1, false),
			emulation.SetFocusEmulationEnabled(true), page.SetWebLifecycleState(page.SetWebLifecycleStateStateActive),
			page.SetLifecycleEventsEnabled(false), chromedp.ActionFunc(preparePage))
	})
	if err != nil {
		cancel()
		return fmt.Errorf("open a browser page: %w", err)
	}
	c.id = chromedp.FromContext(cctx).Target.TargetID
	prof.register(c.id, t)
	t.mu.Lock()
	t.conn = c
	// A new page has no screencast running yet, whatever the old one had: without this a
	// watched tab that crashed and was reconnected never started sending frames again.
	t.casting = false
	t.crashed, t.crashWhy = false, ""
	t.touchLocked()
	t.mu.Unlock()
	t.m.ops.Add(1)
	go t.serve(c)
	return nil
}

// listen runs on chromedp's event loop: it must not block or call the browser.
func (c *conn) listen(ev any) {
	switch ev := ev.(type) {
	case *page.EventScreencastFrame:
		select {
		case c.frames <- ev:
		default:
			// The worker is behind: acknowledge without showing, or Chromium stops sending.
			go page.ScreencastFrameAck(ev.SessionID).Do(cdp.WithExecutor(c.ctx, chromedp.FromContext(c.ctx).Target)) // Best effort: the page may be gone.
		}
	case *page.EventFrameNavigated, *page.EventNavigatedWithinDocument, *page.EventFrameStartedLoading,
		*page.EventFrameStoppedLoading, *page.EventLoadEventFired, *inspector.EventTargetCrashed,
		*page.EventJavascriptDialogOpening, *network.EventResponseReceived:
		if r, ok := ev.(*network.EventResponseReceived); ok && r.Type != network.ResourceTypeDocument {
			return
		}
		select {
		case c.evc <- ev:
		default:
		}
	}
}

// post hands a browser-level event to the tab's worker.
func (t *tab) post(ev any) {
	t.mu.Lock()
	c := t.conn
	t.mu.Unlock()
	if c == nil {
		return
	}
	select {
	case c.evc <- ev:
	default:
	}
}

// serve is the tab's worker for one conn: it applies events to the tab's state, publishes
// them, and acknowledges and fans out screencast frames.
func (t *tab) serve(c *conn) {
	defer t.m.ops.Done()
	defer close(c.done)
	for {
		select {
		case ev := <-c.evc:
			t.handle(c, ev)
		case f := <-c.frames:
			t.frame(c, f)
		case <-c.ctx.Done():
			c.prof.unregister(c.id)
			t.mu.Lock()
			lost := t.conn == c && !t.closing
			t.mu.Unlock()
			if lost {
				t.markCrashed("the page was closed")
			}
			return
		}
	}
}

func (t *tab) handle(c *conn, ev any) {
	main := func(id any) bool { return fmt.Sprint(id) == string(c.id) }
	switch ev := ev.(type) {
	case *page.EventFrameNavigated:
		if ev.Frame.ParentID != "" {
			return
		}
		t.update(func() { t.url, t.navSeq, t.money = ev.Frame.URL+ev.Frame.URLFragment, t.navSeq+1, "" })
		t.navigatedPrompt(ev.Frame)
		t.refresh(c)
		t.m.publish(EventURL, t, "")
		t.m.record(t, "navigated", t.currentURL(), "")
	case *page.EventNavigatedWithinDocument:
		if !main(ev.FrameID) {
			return
		}
		t.update(func() { t.url, t.navSeq, t.loadSeq = ev.URL, t.navSeq+1, t.loadSeq+1 })
		t.refresh(c)
		t.m.publish(EventURL, t, "")
	case *page.EventFrameStartedLoading:
		if main(ev.FrameID) {
			t.update(func() { t.loading = true })
			t.m.publish(EventLoading, t, "")
		}
	case *page.EventFrameStoppedLoading:
		if main(ev.FrameID) {
			t.refresh(c) // before waking the waiters, so they see the loaded page's title
			t.update(func() { t.loading, t.loadSeq = false, t.loadSeq+1 })
			t.m.publish(EventLoading, t, "")
			t.m.checkMoneyLater(t, c)
		}
	case *network.EventResponseReceived:
		if main(ev.FrameID) {
			t.update(func() { t.status = int(ev.Response.Status) })
		}
	case *target.EventTargetInfoChanged:
		t.setTitle(ev.TargetInfo.Title)
	case *inspector.EventTargetCrashed, *target.EventTargetCrashed:
		t.markCrashed("the page's renderer crashed")
	case *page.EventJavascriptDialogOpening:
		// A dialog blocks every script on the page, so it is answered at once: accepted
		// (prompts with their default text). The action log and an event tell what it said.
		ctx, cancel := execCtx(c, 2*time.Second)
		err := page.HandleJavaScriptDialog(true).WithPromptText(ev.DefaultPrompt).Do(ctx)
		cancel()
		detail := fmt.Sprintf("%s dialog %q accepted", ev.Type, ev.Message)
		if err != nil {
			detail = fmt.Sprintf("%s dialog %q could not be answered: %v", ev.Type, ev.Message, err)
		}
		t.m.record(t, "dialog", detail, "")
		t.m.publish(EventDialog, t, detail)
	case *runtime.EventBindingCalled, *network.EventLoadingFailed:
		t.handlePrompt(c, ev)
	case downloadEnded:
		path := ev.progress.FilePath
		if path == "" {
			path = filepath.Join(t.m.DownloadsDir(), ev.name)
		}
		detail := path
		if ev.progress.State != cdpbrowser.DownloadProgressStateCompleted {
			detail = "cancelled: " + ev.name
		}
		t.m.record(t, "download", detail, "")
		t.m.publish(EventDownload, t, detail)
	}
}

// refresh reads the navigation history for the URL, title and back/forward state.
func (t *tab) refresh(c *conn) {
	ctx, cancel := execCtx(c, 2*time.Second)
	idx, entries, err := page.GetNavigationHistory().Do(ctx)
	cancel()
	if err != nil || idx < 0 || int(idx) >= len(entries) {
		return
	}
	e := entries[idx]
	retitled := false
	t.update(func() {
		t.url, t.canBack, t.canForward = e.URL, idx > 0, int(idx) < len(entries)-1
		if e.Title != "" && e.Title != t.title {
			t.title, retitled = e.Title, true
		}
	})
	if retitled {
		t.m.publish(EventTitle, t, "")
	}
}

// execCtx is a context for protocol commands on the conn's target, bounded by d.
func execCtx(c *conn, d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(c.ctx, d)
	return cdp.WithExecutor(ctx, chromedp.FromContext(c.ctx).Target), cancel
}

// setTitle records the page's title and tells the subscribers if it changed.
func (t *tab) setTitle(title string) {
	t.mu.Lock()
	changed := title != t.title
	t.title = title
	t.mu.Unlock()
	if changed {
		t.notify()
		t.m.publish(EventTitle, t, "")
	}
}

func (t *tab) update(f func()) {
	t.mu.Lock()
	f()
	t.mu.Unlock()
	t.notify()
}

// notify wakes everyone waiting for a state change.
func (t *tab) notify() {
	t.mu.Lock()
	close(t.changed)
	t.changed = make(chan struct{})
	t.mu.Unlock()
}

func (t *tab) markCrashed(why string) {
	t.mu.Lock()
	if t.crashed || t.closing {
		t.mu.Unlock()
		return
	}
	t.crashed, t.crashWhy, t.loading = true, why, false
	t.mu.Unlock()
	t.notify()
	t.m.log.Warn("browser tab crashed", "pane", t.paneID, "tab", t.id, "why", why)
	t.m.record(t, "crashed", why, "")
	t.m.publish(EventCrashed, t, why)
}

func (t *tab) info() TabInfo {
	t.mu.Lock()
	defer t.mu.Unlock()
	return TabInfo{PaneID: t.paneID, TabID: t.id, WorkspaceID: t.ws, URL: t.url, Title: t.title, Loading: t.loading,
		Crashed: t.crashed, Discarded: t.conn == nil && !t.crashed, Active: t.active, CanGoBack: t.canBack, CanGoForward: t.canForward,
		Prompt: t.prompt}
}

func (t *tab) currentURL() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.url
}

func (t *tab) touchLocked() { t.lastUsed = time.Now() }

func (t *tab) idleFor() time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.conn == nil || t.casting {
		return 0
	}
	return time.Since(t.lastUsed)
}

// discard closes the tab's page, keeping its URL for a reload on activation.
func (t *tab) discard() bool {
	t.mu.Lock()
	c := t.conn
	if c == nil || t.active || t.closing {
		t.mu.Unlock()
		return false
	}
	t.conn = nil
	t.loading = false
	t.mu.Unlock()
	c.cancel()
	<-c.done
	t.notify()
	return true
}

// close closes the tab's page for good.
func (t *tab) close() {
	t.mu.Lock()
	t.closing = true
	c := t.conn
	t.conn = nil
	t.mu.Unlock()
	if c != nil {
		c.cancel()
		<-c.done
	}
	t.dropUploads()
	t.notify()
}

// live returns the tab's conn, or why there is none.
func (t *tab) live() (*conn, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.closing:
		return nil, ErrNoTab
	case t.crashed:
		return nil, fmt.Errorf("%w (%s): reconnect the pane to reload it", ErrCrashed, t.crashWhy)
	case t.conn == nil:
		return nil, fmt.Errorf("%w: the tab was discarded while idle; activate it to reload it", ErrNoTab)
	}
	t.touchLocked()
	return t.conn, nil
}

// run runs actions on the tab's page, bounded by ctx and by opTimeout.
func (t *tab) run(ctx context.Context, actions ...chromedp.Action) error {
	c, err := t.live()
	if err != nil {
		return err
	}
	rctx, cancel := context.WithTimeout(c.ctx, opTimeout)
	defer cancel()
	if dl, ok := ctx.Deadline(); ok {
		var cancel2 context.CancelFunc
		rctx, cancel2 = context.WithDeadline(rctx, dl)
		defer cancel2()
	}
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	err = chromedp.Run(rctx, actions...)
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if _, lerr := t.live(); lerr != nil {
		return lerr
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("the page did not answer in time (a dialog or a busy script?): %w", err)
	}
	return err
}

// wait blocks until cond (called under t.mu) holds, ctx ends or d passes; it reports
// whether cond held.
func (t *tab) wait(ctx context.Context, d time.Duration, cond func() bool) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		t.mu.Lock()
		ok, ch, gone := cond(), t.changed, t.closing || t.crashed
		t.mu.Unlock()
		if ok {
			return true
		}
		if gone {
			return false
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		case <-timer.C:
			return false
		}
	}
}

// awaitRun runs run in a goroutine of its own and waits for its end, for ctx, or for limit,
// whose error says tooSlow. A run given up on ends when its context (the caller cancels it
// on any error) does; its result is dropped.
func awaitRun(ctx context.Context, limit time.Duration, tooSlow string, run func() error) error {
	errc := make(chan error, 1)
	go func() { errc <- run() }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(limit):
		return fmt.Errorf("%s within %v", tooSlow, limit)
	}
}

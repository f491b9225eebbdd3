package browser

import (
	"context"
	"encoding/base64"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// screencastQuality is the JPEG quality of live-view frames: measured at ~16 KB a frame,
// sharp enough for text at the pane's size.
const screencastQuality = 70

// Frame is one picture of the live view.
type Frame struct {
	TabID string `json:"tabId"`
	Data  []byte `json:"data"` // JPEG
	// Width and Height are the viewport the frame shows, in CSS pixels.
	Width   int     `json:"width"`
	Height  int     `json:"height"`
	ScrollX float64 `json:"scrollX"`
	ScrollY float64 `json:"scrollY"`
	// Captured is when Chromium drew the frame.
	Captured time.Time `json:"captured"`
}

// watcher is one viewer of a pane's screencast. Only the newest frames matter to a live
// view, so a viewer that falls behind loses old frames, never new ones.
type watcher struct {
	mu     sync.Mutex
	ch     chan Frame
	done   chan struct{}
	closed bool
}

func (w *watcher) send(f Frame) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	select {
	case w.ch <- f:
		return
	default:
	}
	select {
	case <-w.ch: // drop the oldest
	default:
	}
	select {
	case w.ch <- f:
	default:
	}
}

func (w *watcher) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.closed {
		w.closed = true
		close(w.done)
		close(w.ch)
	}
}

// StartScreencast streams the pane's active tab as JPEG frames until ctx ends (or the pane
// closes), following tab switches. Chromium draws frames only while someone watches, and
// only when the page changes; a new viewer first gets the page as it is.
func (m *Manager) StartScreencast(ctx context.Context, paneID string) (<-chan Frame, error) {
	if !m.ops.Enter() {
		return nil, ErrClosed
	}
	defer m.ops.Done()
	m.mu.Lock()
	p := m.panes[paneID]
	if p == nil {
		m.mu.Unlock()
		return nil, m.noPane(paneID)
	}
	w := &watcher{ch: make(chan Frame, 2), done: make(chan struct{})}
	p.watchers[w] = struct{}{}
	first := len(p.watchers) == 1
	active := p.Active()
	m.mu.Unlock()
	if active != nil {
		if first {
			m.startCast(active)
		} else if f := active.latestFrame(); f != nil {
			w.send(*f)
		}
	}
	m.ops.Add(1)
	go func() {
		defer m.ops.Done()
		select {
		case <-ctx.Done():
		case <-m.ctx.Done():
		case <-w.done:
		}
		m.mu.Lock()
		delete(p.watchers, w)
		last := len(p.watchers) == 0
		active := p.Active()
		m.mu.Unlock()
		w.stop()
		if last && active != nil {
			active.stopCast()
		}
	}()
	return w.ch, nil
}

func (t *tab) latestFrame() *Frame {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.lastFrame
}

// startCast starts Chromium's screencast on t and shows viewers the page as it is now.
func (m *Manager) startCast(t *tab) {
	m.castMu.Lock()
	defer m.castMu.Unlock()
	t.mu.Lock()
	if t.casting || t.conn == nil {
		t.mu.Unlock()
		return
	}
	t.casting = true
	w, h := t.width, t.height
	t.mu.Unlock()
	ctx, cancel := context.WithTimeout(m.ctx, opTimeout)
	defer cancel()
	casting := m.castingTabs()
	box := m.castBox(w, h, len(casting))
	if err := t.run(ctx, startScreencast(box)); err != nil {
		t.update(func() { t.casting = false })
		m.log.Warn("screencast did not start", "pane", t.paneID, "tab", t.id, "err", err)
		return
	}
	t.update(func() { t.castSize = box })
	// A page that does not repaint sends no frame: give the viewers a picture now.
	var buf []byte
	err := t.run(ctx, chromedp.ActionFunc(func(ctx context.Context) error {
		var err error
		buf, err = page.CaptureScreenshot().WithFormat(page.CaptureScreenshotFormatJpeg).WithQuality(screencastQuality).Do(ctx)
		return err
	}))
	if err == nil {
		m.deliver(t, Frame{TabID: t.id, Data: buf, Width: w, Height: h, Captured: time.Now()})
	}
	m.resizeCasts(ctx, casting)
}

// stopCast stops Chromium's screencast on t.
func (t *tab) stopCast() {
	m := t.m
	m.castMu.Lock()
	defer m.castMu.Unlock()
	t.mu.Lock()
	was := t.casting
	t.casting = false
	t.mu.Unlock()
	if !was {
		return
	}
	ctx, cancel := context.WithTimeout(m.ctx, inputTimeout)
	defer cancel()
	t.run(ctx, page.StopScreencast()) // Best effort: the page may be gone.
	m.resizeCasts(ctx, m.castingTabs())
}

func startScreencast(box size) chromedp.Action {
	return page.StartScreencast().WithFormat(page.ScreencastFormatJpeg).WithQuality(screencastQuality).
		WithMaxWidth(int64(box.w)).WithMaxHeight(int64(box.h)).WithEveryNthFrame(1)
}

// size is a frame's size in pixels.
type size struct{ w, h int }

// crowdedCastPixels is the most pixels a frame of a crowded screencast has. Chromium copies
// every frame into fresh buffers; those up to 960 KiB come from buckets it reuses, larger
// ones are mapped anew and faulted in, page by page, for every frame. Measured on the 2-core
// machine with four panes of 940 × 480 casting: 16 fps each at full size, 35 fps each at
// 666 × 340 (226,000 pixels, 0.9 MB), 17 fps at 700 × 357 (1.0 MB). The margin under 960 KiB
// covers row padding.
const crowdedCastPixels = 225_000

// castBox is the frame size for a viewport of w × h while n screencasts run (this one
// included). Up to Options.FullSizeCasts casts run at full size; beyond that every cast is
// scaled down to crowdedCastPixels, keeping its shape, so that every pane stays live. The
// live view scales the picture to the pane; clicks map through the viewport, not the picture.
func (m *Manager) castBox(w, h, n int) size {
	if n <= m.opts.FullSizeCasts || w*h <= crowdedCastPixels {
		return size{w, h}
	}
	scale := math.Sqrt(float64(crowdedCastPixels) / float64(w*h))
	return size{max(1, int(float64(w)*scale)), max(1, int(float64(h)*scale))}
}

// castingTabs returns the tabs whose screencast runs, in every workspace: they share the
// machine's cores.
func (m *Manager) castingTabs() []*tab {
	m.mu.Lock()
	var all []*tab
	for _, p := range m.panes {
		all = append(all, p.All()...)
	}
	m.mu.Unlock()
	return slices.DeleteFunc(all, func(t *tab) bool {
		t.mu.Lock()
		defer t.mu.Unlock()
		return !t.casting
	})
}

// resizeCasts restarts, at the size castBox gives them now, the casts that run at another
// size: when a cast starts or stops, the others may cross into or out of the crowd. The
// caller holds castMu. A restarted cast keeps its viewers; they see the next frame.
func (m *Manager) resizeCasts(ctx context.Context, casting []*tab) {
	for _, t := range casting {
		t.mu.Lock()
		box, running := m.castBox(t.width, t.height, len(casting)), t.castSize
		t.mu.Unlock()
		if box == running {
			continue
		}
		if err := t.run(ctx, page.StopScreencast(), startScreencast(box)); err != nil {
			m.log.Warn("screencast did not resize", "pane", t.paneID, "tab", t.id, "err", err)
			continue
		}
		t.update(func() { t.castSize = box })
	}
}

// frame acknowledges a screencast frame (Chromium sends the next only after that) and
// hands it to the pane's viewers if t is still the tab they watch.
func (t *tab) frame(c *conn, ev *page.EventScreencastFrame) {
	ctx, cancel := execCtx(c, inputTimeout)
	page.ScreencastFrameAck(ev.SessionID).Do(ctx) // Best effort: a lost ack only pauses the cast.
	cancel()
	data, err := base64.StdEncoding.DecodeString(ev.Data)
	if err != nil || ev.Metadata == nil {
		return
	}
	f := Frame{TabID: t.id, Data: data, Width: int(ev.Metadata.DeviceWidth), Height: int(ev.Metadata.DeviceHeight),
		ScrollX: ev.Metadata.ScrollOffsetX, ScrollY: ev.Metadata.ScrollOffsetY, Captured: time.Now()}
	// Chromium's frame time comes from its own clock mapping, a few milliseconds off ours:
	// a frame is never taken to be from the future.
	if ts := ev.Metadata.Timestamp; ts != nil && ts.Time().Before(f.Captured) {
		f.Captured = ts.Time()
	}
	t.m.deliver(t, f)
}

func (m *Manager) deliver(t *tab, f Frame) {
	t.mu.Lock()
	t.lastFrame = &f
	casting := t.casting
	t.mu.Unlock()
	if !casting {
		return
	}
	m.mu.Lock()
	p := m.panes[t.paneID]
	var ws []*watcher
	if p != nil && p.Active() == t {
		for w := range p.watchers {
			ws = append(ws, w)
		}
	}
	m.mu.Unlock()
	for _, w := range ws {
		w.send(f)
	}
}

// Package browser runs the browser panes: headless Chromium driven over the DevTools
// protocol (chromedp), one browser per workspace profile kept under the data dir so cookies
// survive a restart, one page target per pane tab, a JPEG screencast for the live view,
// trusted input events, screenshots, and the page actions the agent's browser tools use.
package browser

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/clusterspace/clusterspace/backend/internal/inflight"
	"github.com/clusterspace/clusterspace/backend/pubsub"
)

// Errors the callers tell apart (with errors.Is).
var (
	ErrNoChromium = errors.New("no Chromium found")
	ErrNoPane     = errors.New("no browser in this pane")
	ErrNoTab      = errors.New("no such browser tab")
	ErrCrashed    = errors.New("the page has crashed")
	ErrClosed     = errors.New("the browser manager has shut down")
)

// Defaults of a new tab and of the manager.
const (
	// DefaultWidth and DefaultHeight are a laptop-sized viewport until the pane reports its size.
	DefaultWidth  = 1280
	DefaultHeight = 800
	// maxDimension bounds a viewport: far beyond any screen, small enough that a bad size
	// cannot make Chromium allocate gigantic surfaces.
	maxDimension = 8192
	// DefaultIdleDiscard is how long a background tab may sit unused before its page is
	// discarded to free memory; it is reloaded when the tab is activated again.
	DefaultIdleDiscard = 15 * time.Minute
	// launchTimeout bounds a browser start; measured starts are under a second.
	launchTimeout = 30 * time.Second
	// opTimeout bounds one protocol operation that has no deadline of its own, so a page stuck
	// in a modal or an endless script cannot hang a caller forever.
	opTimeout = 30 * time.Second
	// shutdownTimeout bounds the graceful close that flushes a profile's cookies to disk.
	shutdownTimeout = 5 * time.Second
)

// Options configure a Manager.
type Options struct {
	// DataDir holds browser-profiles/<workspace>, downloads and screenshots (default: a
	// directory in the system temp dir).
	DataDir string
	Logger  *slog.Logger
	// ExecPath is the Chromium binary (default: FindChromium).
	ExecPath string
	// IdleDiscard is how long a background tab may be idle before it is discarded
	// (default DefaultIdleDiscard; negative: never).
	IdleDiscard time.Duration
	// FullSizeCasts is how many screencasts may run at once at full size (default: one per
	// core); beyond that every cast is scaled down (see castBox).
	FullSizeCasts int
}

// FindChromium returns the Chromium to run: $CLUSTERSPACE_CHROMIUM, else /usr/bin/chromium,
// else chromium-browser, chromium or google-chrome on PATH.
func FindChromium() (string, error) {
	if p := os.Getenv("CLUSTERSPACE_CHROMIUM"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%w: CLUSTERSPACE_CHROMIUM is %q, which does not exist: fix the path or unset it", ErrNoChromium, p)
		}
		return p, nil
	}
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium", nil
	}
	for _, name := range []string{"chromium-browser", "chromium", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: browser panes need Chromium: install it (sudo apt install chromium; the .deb recommends it, scripts/setup.sh installs it) or set CLUSTERSPACE_CHROMIUM to a Chromium or Chrome binary", ErrNoChromium)
}

// TabInfo is the state of one tab, as the UI shows it.
type TabInfo struct {
	PaneID       string `json:"paneId"`
	TabID        string `json:"tabId"`
	WorkspaceID  string `json:"workspaceId"`
	URL          string `json:"url"`
	Title        string `json:"title"`
	Loading      bool   `json:"loading"`
	Crashed      bool   `json:"crashed"`
	Discarded    bool   `json:"discarded"`
	Active       bool   `json:"active"`
	CanGoBack    bool   `json:"canGoBack"`
	CanGoForward bool   `json:"canGoForward"`
	// Prompt is the question the page waits on the person for (HTTP auth, a bad certificate).
	Prompt *Prompt `json:"prompt,omitempty"`
}

// Event kinds published on Events().
const (
	EventOpened      = "opened"
	EventClosed      = "closed"
	EventActivated   = "activated"
	EventURL         = "url"
	EventTitle       = "title"
	EventLoading     = "loading"
	EventCrashed     = "crashed"
	EventReconnected = "reconnected"
	EventDiscarded   = "discarded"
	EventDownload    = "download"
	EventDialog      = "dialog"
	EventPrompt      = "prompt" // the tab's Prompt was set (Detail: its kind) or answered (Detail "")
)

// Event is a change to a tab. Detail carries the download's file or the dialog's message.
type Event struct {
	Kind   string  `json:"kind"`
	Tab    TabInfo `json:"tab"`
	Detail string  `json:"detail,omitempty"`
}

// Manager owns every browser, tab and goroutine of the browser panes.
type Manager struct {
	opts   Options
	log    *slog.Logger
	events *pubsub.Broker[Event]
	ctx    context.Context // ends at Shutdown
	cancel context.CancelFunc
	ops    inflight.Ops // every goroutine and every operation in flight; closed at Shutdown
	// launchMu serialises browser starts (see profileFor); it is never taken under mu.
	launchMu sync.Mutex
	// castMu serialises starting, stopping and resizing screencasts (see resizeCasts); it is
	// never taken under mu or a tab's mu.
	castMu sync.Mutex

	mu       sync.Mutex
	profiles map[string]*profile // by workspace id
	panes    map[string]*pane
	nextTab  uint64
	// ensuring holds, per pane, the Ensure opening its first tab; others wait on it.
	ensuring map[string]chan struct{}
}

// NewManager returns a Manager with no browsers; each starts when its first tab opens.
func NewManager(opts Options) *Manager {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.DataDir == "" {
		opts.DataDir = filepath.Join(os.TempDir(), "clusterspace-browser")
	}
	if opts.IdleDiscard == 0 {
		opts.IdleDiscard = DefaultIdleDiscard
	}
	if opts.FullSizeCasts == 0 {
		opts.FullSizeCasts = runtime.NumCPU()
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &Manager{opts: opts, log: opts.Logger, events: pubsub.NewBroker[Event](), ctx: ctx, cancel: cancel,
		profiles: map[string]*profile{}, panes: map[string]*pane{}, ensuring: map[string]chan struct{}{}}
	if opts.IdleDiscard > 0 {
		m.ops.Add(1)
		go m.discardIdle()
	}
	return m
}

// Events is the stream of tab changes.
func (m *Manager) Events() *pubsub.Broker[Event] { return m.events }

// DownloadsDir is where downloads are saved.
func (m *Manager) DownloadsDir() string { return filepath.Join(m.opts.DataDir, "downloads") }

// ScreenshotsDir is where screenshots are saved.
func (m *Manager) ScreenshotsDir() string { return filepath.Join(m.opts.DataDir, "screenshots") }

// ProfileDir is the persistent Chromium profile of a workspace.
func (m *Manager) ProfileDir(workspaceID string) string {
	return filepath.Join(m.opts.DataDir, "browser-profiles", safeName(workspaceID))
}

func (m *Manager) publish(kind string, t *tab, detail string) {
	m.events.Publish(kind, Event{Kind: kind, Tab: t.info(), Detail: detail})
}

// Shutdown closes every tab and browser (gracefully, so cookies reach the disk), waits for
// every goroutine, and closes the event stream. Calls after it fail with ErrClosed.
func (m *Manager) Shutdown() {
	m.mu.Lock()
	if !m.ops.Close() {
		m.mu.Unlock()
		return
	}
	profiles := make([]*profile, 0, len(m.profiles))
	for _, p := range m.profiles {
		profiles = append(profiles, p)
	}
	var tabs []*tab
	for _, p := range m.panes {
		tabs = append(tabs, p.All()...)
		for w := range p.watchers {
			w.stop()
		}
	}
	m.mu.Unlock()
	m.cancel()
	for _, t := range tabs {
		t.close()
	}
	var wg sync.WaitGroup
	for _, p := range profiles {
		wg.Go(p.close)
	}
	wg.Wait()
	m.ops.Wait()
	// Best effort: the copies of chosen files are only for pages, which are all gone now
	// (this also clears what a crashed run left).
	os.RemoveAll(m.UploadsDir())
	m.events.Shutdown()
}

// discardIdle closes the pages of background tabs idle for longer than IdleDiscard; the
// tab keeps its URL and reloads when activated.
func (m *Manager) discardIdle() {
	defer m.ops.Done()
	every := min(time.Minute, max(m.opts.IdleDiscard/4, 10*time.Millisecond))
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-m.ctx.Done():
			return
		case <-tick.C:
		}
		m.mu.Lock()
		var idle []*tab
		for _, p := range m.panes {
			for _, t := range p.All() {
				if t != p.Active() && t.idleFor() > m.opts.IdleDiscard {
					idle = append(idle, t)
				}
			}
		}
		m.mu.Unlock()
		for _, t := range idle {
			if t.discard() {
				m.log.Info("discarded an idle background tab", "pane", t.paneID, "tab", t.id)
				m.publish(EventDiscarded, t, "")
			}
		}
	}
}

// safeName turns an id into a file name: letters, digits, '-', '_' and '.'.
func safeName(id string) string {
	if id == "" {
		return "default"
	}
	var b strings.Builder
	for _, r := range id {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	s := b.String()
	if strings.Trim(s, ".") == "" {
		return "default"
	}
	return s
}

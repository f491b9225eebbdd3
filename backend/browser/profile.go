package browser

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/clusterspace/clusterspace/backend/procfd"
)

// profile is one workspace's Chromium: a process with a persistent user data dir, and the
// root context whose hidden first tab keeps the process alive while pane tabs come and go.
// download is a file being downloaded and the tab that started it.
type download struct {
	name string
	tab  *tab
}

type profile struct {
	m         *Manager
	workspace string

	mu          sync.Mutex
	rootCtx     context.Context // chromedp context of the browser; ends when it dies
	rootCancel  context.CancelFunc
	allocCancel context.CancelFunc
	dead        chan struct{} // closed when the browser is gone
	closing     bool
	targets     map[target.ID]*tab
	downloads   map[string]download // by guid
	launched    time.Duration
	closeOnce   sync.Once
}

// launchFlags are the Chromium switches that work as root and offline: without the
// background-networking ones it keeps trying to reach hosts this network refuses.
func (m *Manager) launchFlags(execPath, profileDir string) []chromedp.ExecAllocatorOption {
	return []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(execPath),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("mute-audio", true),
		// Every pane's page is on screen: none may be throttled as a background tab.
		chromedp.Flag("disable-renderer-backgrounding", true),
		chromedp.Flag("disable-background-timer-throttling", true),
		chromedp.Flag("disable-backgrounding-occluded-windows", true),
		chromedp.Flag("hide-scrollbars", false),
		chromedp.UserDataDir(profileDir),
		// Chromium lives as long as the workspace: it must not hold the window's pipes open.
		chromedp.ModifyCmdFunc(func(cmd *exec.Cmd) {
			procfd.SealInherited()
			// What chromedp does when not told otherwise: the browser dies with the app.
			cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		}),
		chromedp.WindowSize(DefaultWidth, DefaultHeight),
	}
}

// profileFor returns the workspace's running browser, starting it (again) if needed.
// Launches are serialised: two callers must not start two Chromiums on one profile
// directory, which Chromium refuses.
func (m *Manager) profileFor(ctx context.Context, workspace string) (*profile, error) {
	m.launchMu.Lock()
	defer m.launchMu.Unlock()
	m.mu.Lock()
	if m.ops.Closed() {
		m.mu.Unlock()
		return nil, ErrClosed
	}
	p := m.profiles[workspace]
	m.mu.Unlock()
	if p != nil {
		select {
		case <-p.dead:
		default:
			return p, nil
		}
	}
	p = &profile{m: m, workspace: workspace, dead: make(chan struct{}), targets: map[target.ID]*tab{}, downloads: map[string]download{}}
	if err := p.launch(ctx); err != nil {
		return nil, err
	}
	m.mu.Lock()
	if m.ops.Closed() {
		m.mu.Unlock()
		p.close()
		return nil, ErrClosed
	}
	m.profiles[workspace] = p
	m.mu.Unlock()
	return p, nil
}

// launch starts Chromium and waits until it answers.
func (p *profile) launch(ctx context.Context) error {
	m := p.m
	execPath := m.opts.ExecPath
	if execPath == "" {
		var err error
		if execPath, err = FindChromium(); err != nil {
			return err
		}
	}
	dir := m.ProfileDir(p.workspace)
	for _, d := range []string{dir, m.DownloadsDir()} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("browser data dir %q cannot be created (%v): pick a writable data dir", d, err)
		}
	}
	start := time.Now()
	// The allocator and the root outlive the caller's ctx: the browser is shared by every
	// later call and is stopped only by close.
	allocCtx, allocCancel := chromedp.NewExecAllocator(context.Background(), m.launchFlags(execPath, dir)...)
	rootCtx, rootCancel := chromedp.NewContext(allocCtx,
		chromedp.WithErrorf(func(f string, a ...any) { m.log.Debug("chromedp: "+fmt.Sprintf(f, a...), "workspace", p.workspace) }),
		chromedp.WithLogf(func(f string, a ...any) { m.log.Debug("chromedp: "+fmt.Sprintf(f, a...), "workspace", p.workspace) }))
	chromedp.ListenBrowser(rootCtx, p.onBrowserEvent)
	downloads := m.DownloadsDir()
	err := awaitRun(ctx, launchTimeout, "it did not answer", func() error {
		return chromedp.Run(rootCtx, chromedp.ActionFunc(func(ctx context.Context) error {
			c := chromedp.FromContext(ctx)
			return cdpbrowser.SetDownloadBehavior(cdpbrowser.SetDownloadBehaviorBehaviorAllow).
				WithDownloadPath(downloads).WithEventsEnabled(true).Do(cdp.WithExecutor(ctx, c.Browser))
		}))
	})
	if err != nil {
		rootCancel()
		allocCancel()
		return fmt.Errorf("start Chromium (%s) for workspace %q: %w; check that it runs (%s --headless --version)", execPath, p.workspace, err, execPath)
	}
	p.rootCtx, p.rootCancel, p.allocCancel = rootCtx, rootCancel, allocCancel
	p.launched = time.Since(start)
	m.log.Info("browser started", "workspace", p.workspace, "took", p.launched, "profile", dir)
	m.ops.Add(1)
	go p.watch()
	return nil
}

// watch marks the profile dead when its browser goes away, and its tabs crashed unless the
// manager is closing them.
func (p *profile) watch() {
	defer p.m.ops.Done()
	<-p.rootCtx.Done()
	close(p.dead)
	p.mu.Lock()
	closing := p.closing
	var tabs []*tab
	for _, t := range p.targets {
		tabs = append(tabs, t)
	}
	p.mu.Unlock()
	if closing {
		return
	}
	p.m.log.Warn("the browser went away", "workspace", p.workspace)
	for _, t := range tabs {
		t.markCrashed("the browser process went away")
	}
	// Release what is left of the dead browser; a reconnect starts a new one.
	p.closeOnce.Do(func() {
		p.rootCancel()
		p.allocCancel()
	})
}

// close shuts the browser down gracefully (so its cookie store is flushed), then kills
// whatever is left.
func (p *profile) close() {
	p.closeOnce.Do(func() {
		p.mu.Lock()
		p.closing = true
		p.mu.Unlock()
		if p.rootCtx == nil {
			return
		}
		ctx, cancel := context.WithTimeout(p.rootCtx, shutdownTimeout)
		if err := chromedp.Cancel(ctx); err != nil {
			p.m.log.Debug("browser close", "workspace", p.workspace, "err", err)
		}
		cancel()
		p.rootCancel()
		p.allocCancel()
	})
}

func (p *profile) register(id target.ID, t *tab) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.targets[id] = t
}

func (p *profile) unregister(id target.ID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.targets, id)
}

func (p *profile) tabOf(id target.ID) *tab {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.targets[id]
}

// onBrowserEvent runs on chromedp's event loop: it must not block or call the browser.
func (p *profile) onBrowserEvent(ev any) {
	switch ev := ev.(type) {
	case *target.EventTargetInfoChanged:
		if t := p.tabOf(ev.TargetInfo.TargetID); t != nil {
			t.post(ev)
		}
	case *target.EventTargetCrashed:
		if t := p.tabOf(ev.TargetID); t != nil {
			t.post(ev)
		}
	case *target.EventTargetCreated:
		info := ev.TargetInfo
		if info.Type == "page" && info.OpenerID != "" {
			if opener := p.tabOf(info.OpenerID); opener != nil {
				// A popup or a target=_blank link: it becomes a tab of the opener's pane.
				p.m.adoptLater(p, opener.paneID, info.TargetID)
			}
		}
	case *cdpbrowser.EventDownloadWillBegin:
		t := p.tabOf(target.ID(ev.FrameID))
		p.mu.Lock()
		p.downloads[ev.GUID] = download{name: ev.SuggestedFilename, tab: t}
		p.mu.Unlock()
	case *cdpbrowser.EventDownloadProgress:
		if ev.State == cdpbrowser.DownloadProgressStateCompleted || ev.State == cdpbrowser.DownloadProgressStateCanceled {
			p.mu.Lock()
			d := p.downloads[ev.GUID]
			delete(p.downloads, ev.GUID)
			p.mu.Unlock()
			if d.tab != nil {
				d.tab.post(downloadEnded{name: d.name, progress: ev})
			}
		}
	}
}

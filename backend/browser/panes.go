package browser

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/target"

	"github.com/clusterspace/clusterspace/backend/internal/panetabs"
)

// navTimeout bounds the wait for a page to load after a navigation: past it the call
// returns with the page still loading rather than failing.
const navTimeout = 30 * time.Second

// pane is one browser pane: its tabs, the one shown, its size, its viewers and its log.
type pane struct {
	panetabs.Tabs[*tab]
	id, workspace string
	width, height int
	watchers      map[*watcher]struct{}
	log           actionLog
}

// PageInfo is where a tab is after a navigation.
type PageInfo struct {
	TabID   string `json:"tabId"`
	URL     string `json:"url"`
	Title   string `json:"title"`
	Status  int    `json:"status,omitempty"` // HTTP status of the document, 0 if unknown
	Loading bool   `json:"loading"`          // still loading when the wait ended
	// Download is set when the navigation downloaded a file instead of showing a page.
	Download bool `json:"download,omitempty"`
	// Prompt is the question the page waits on the person for, if any.
	Prompt *Prompt `json:"prompt,omitempty"`
}

// NavigationError is a navigation the page refused (no such host, connection refused, …).
type NavigationError struct {
	URL, Reason string
}

func (e *NavigationError) Error() string {
	return fmt.Sprintf("could not load %s: %s", e.URL, e.Reason)
}

// ErrNoHistory is Back or Forward with nowhere to go.
var ErrNoHistory = errors.New("no page in that direction of the tab's history")

// NormalizeURL makes what a person or model typed into a URL: a bare host or host/path
// gets https://, "localhost:8080" and IP addresses get http://.
func NormalizeURL(raw string) (string, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return "", errors.New("the URL is empty: give an address such as example.com or https://example.com/page")
	}
	lower := strings.ToLower(s)
	for _, scheme := range []string{"http://", "https://", "file://", "about:", "data:", "chrome://", "view-source:"} {
		if strings.HasPrefix(lower, scheme) {
			return s, nil
		}
	}
	if strings.Contains(s, "://") {
		return "", fmt.Errorf("%q has a scheme browser panes do not open: use http:// or https://", raw)
	}
	if strings.ContainsAny(s, " \t\n") {
		return "", fmt.Errorf("%q is not an address (it has spaces): give a URL such as example.com/search?q=words", raw)
	}
	host := s
	if i := strings.IndexAny(host, "/?#"); i >= 0 {
		host = host[:i]
	}
	h := host
	if i := strings.LastIndex(h, ":"); i >= 0 && !strings.HasSuffix(h, "]") {
		h = h[:i]
	}
	scheme := "https://"
	if h == "localhost" || strings.HasSuffix(h, ".localhost") || isIP(h) {
		scheme = "http://"
	}
	u, err := url.Parse(scheme + s)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("%q is not a valid address: give a URL such as example.com or https://example.com/page", raw)
	}
	return u.String(), nil
}

func isIP(h string) bool {
	h = strings.Trim(h, "[]")
	parts := strings.Split(h, ".")
	if len(parts) == 4 {
		for _, p := range parts {
			if n, err := strconv.Atoi(p); err != nil || n < 0 || n > 255 {
				return false
			}
		}
		return true
	}
	return strings.Count(h, ":") >= 2
}

// Open opens a new tab in the pane at rawURL ("" for a blank page) and makes it the pane's
// active tab. The pane is created on first use and belongs to workspaceID, whose browser
// (with its persistent profile) is started if it is not running.
func (m *Manager) Open(ctx context.Context, paneID, workspaceID, rawURL string) (TabInfo, error) {
	if !m.ops.Enter() {
		return TabInfo{}, ErrClosed
	}
	defer m.ops.Done()
	m.mu.Lock()
	if p := m.panes[paneID]; p != nil {
		workspaceID = p.workspace
	}
	m.mu.Unlock()
	return m.openTab(ctx, paneID, workspaceID, rawURL, "")
}

// Ensure opens the pane's first tab (at rawURL, or blank) unless it has one; opened says
// whether it did, and tab is the tab it opened (also when only its navigation failed).
// Callers racing for one pane (the window's view mounting while a conversion opens the page)
// wait for the first, so a pane never gets two first tabs.
func (m *Manager) Ensure(ctx context.Context, paneID, workspaceID, rawURL string) (tab TabInfo, opened bool, err error) {
	for {
		m.mu.Lock()
		if p := m.panes[paneID]; p != nil && p.Len() > 0 {
			m.mu.Unlock()
			return TabInfo{}, false, nil
		}
		if busy, ok := m.ensuring[paneID]; ok {
			m.mu.Unlock()
			select {
			case <-busy:
				continue // opened, or failed: look again
			case <-ctx.Done():
				return TabInfo{}, false, ctx.Err()
			}
		}
		done := make(chan struct{})
		m.ensuring[paneID] = done
		m.mu.Unlock()
		t, err := m.Open(ctx, paneID, workspaceID, rawURL)
		m.mu.Lock()
		delete(m.ensuring, paneID)
		m.mu.Unlock()
		close(done)
		return t, t.TabID != "", err
	}
}

// NewTab opens another tab in an existing pane and makes it active.
func (m *Manager) NewTab(ctx context.Context, paneID, rawURL string) (TabInfo, error) {
	if !m.ops.Enter() {
		return TabInfo{}, ErrClosed
	}
	defer m.ops.Done()
	m.mu.Lock()
	p := m.panes[paneID]
	m.mu.Unlock()
	if p == nil {
		return TabInfo{}, m.noPane(paneID)
	}
	return m.openTab(ctx, paneID, p.workspace, rawURL, "")
}

func (m *Manager) openTab(ctx context.Context, paneID, workspaceID, rawURL string, existing target.ID) (TabInfo, error) {
	var u string
	if rawURL != "" {
		var err error
		if u, err = NormalizeURL(rawURL); err != nil {
			return TabInfo{}, err
		}
	}
	prof, err := m.profileFor(ctx, workspaceID)
	if err != nil {
		return TabInfo{}, err
	}
	m.mu.Lock()
	m.nextTab++
	id := "btab-" + strconv.FormatUint(m.nextTab, 10)
	w, h := DefaultWidth, DefaultHeight
	if p := m.panes[paneID]; p != nil {
		w, h = p.width, p.height
	}
	m.mu.Unlock()
	t := newTab(m, id, paneID, workspaceID, w, h)
	if err := t.connect(ctx, prof, existing); err != nil {
		return TabInfo{}, err
	}
	m.mu.Lock()
	if m.ops.Closed() {
		m.mu.Unlock()
		t.close()
		return TabInfo{}, ErrClosed
	}
	p := m.panes[paneID]
	if p == nil {
		p = &pane{id: paneID, workspace: workspaceID, width: DefaultWidth, height: DefaultHeight, watchers: map[*watcher]struct{}{}}
		m.panes[paneID] = p
	}
	p.Add(t)
	m.mu.Unlock()
	m.publish(EventOpened, t, "")
	m.activate(p, t)
	if u != "" {
		if _, err := m.navigate(ctx, t, u); err != nil {
			return t.info(), err
		}
	}
	return t.info(), nil
}

// adoptLater makes a page the browser opened by itself (a popup, a target=_blank link) a
// tab of the opener's pane. It runs on chromedp's event loop, so the work is done apart.
func (m *Manager) adoptLater(prof *profile, paneID string, id target.ID) {
	if !m.ops.Enter() {
		return
	}
	go func() {
		defer m.ops.Done()
		ctx, cancel := context.WithTimeout(m.ctx, opTimeout)
		defer cancel()
		if _, err := m.openTab(ctx, paneID, prof.workspace, "", id); err != nil {
			m.log.Warn("could not adopt a page the browser opened", "pane", paneID, "err", err)
		}
	}()
}

// Tabs lists the pane's tabs in the order they were opened.
func (m *Manager) Tabs(paneID string) []TabInfo {
	m.mu.Lock()
	p := m.panes[paneID]
	var tabs []*tab
	if p != nil {
		tabs = p.All()
	}
	m.mu.Unlock()
	infos := make([]TabInfo, 0, len(tabs))
	for _, t := range tabs {
		infos = append(infos, t.info())
	}
	return infos
}

// Panes lists the ids of the panes that have a browser, sorted.
func (m *Manager) Panes() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	ids := make([]string, 0, len(m.panes))
	for id := range m.panes {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func (m *Manager) noPane(paneID string) error {
	known := m.Panes()
	if len(known) == 0 {
		return fmt.Errorf("%w %q: there are no browser panes; open one first", ErrNoPane, paneID)
	}
	return fmt.Errorf("%w %q: the browser panes are %s", ErrNoPane, paneID, strings.Join(known, ", "))
}

// tab returns a tab of the pane: tabID, or the active one when tabID is "".
func (m *Manager) tab(paneID, tabID string) (*pane, *tab, error) {
	m.mu.Lock()
	p := m.panes[paneID]
	if p == nil {
		m.mu.Unlock()
		return nil, nil, m.noPane(paneID)
	}
	defer m.mu.Unlock()
	if t, ok := p.Find(tabID); ok {
		return p, t, nil
	}
	if tabID == "" {
		return nil, nil, fmt.Errorf("%w: pane %q has no tabs", ErrNoTab, paneID)
	}
	return nil, nil, fmt.Errorf("%w %q in pane %q", ErrNoTab, tabID, paneID)
}

// CloseTab closes a tab; the pane shows its neighbour. Closing the last tab removes the pane.
func (m *Manager) CloseTab(paneID, tabID string) error {
	p, t, err := m.tab(paneID, tabID)
	if err != nil {
		return err
	}
	m.mu.Lock()
	next, ok := p.Remove(t)
	if !ok {
		m.mu.Unlock()
		return fmt.Errorf("%w %q in pane %q", ErrNoTab, tabID, paneID)
	}
	var stop []*watcher
	if p.Len() == 0 {
		delete(m.panes, paneID)
		for w := range p.watchers {
			stop = append(stop, w)
		}
		p.Show(nil)
	}
	m.mu.Unlock()
	for _, w := range stop {
		w.stop()
	}
	t.close()
	m.publish(EventClosed, t, "")
	if next != nil {
		m.activate(p, next)
	}
	return nil
}

// ClosePane closes every tab of the pane.
func (m *Manager) ClosePane(paneID string) {
	for _, t := range m.Tabs(paneID) {
		m.CloseTab(paneID, t.TabID) // Best effort: a tab may close concurrently.
	}
}

// CloseWorkspace closes every pane of the workspace and stops its Chromium (gracefully, so
// its cookies reach the profile on disk), for a workspace that is deleted.
func (m *Manager) CloseWorkspace(workspaceID string) {
	// Held throughout, so no launch for the workspace can start while its browser stops.
	m.launchMu.Lock()
	defer m.launchMu.Unlock()
	m.mu.Lock()
	var panes []string
	for id, p := range m.panes {
		if p.workspace == workspaceID {
			panes = append(panes, id)
		}
	}
	prof := m.profiles[workspaceID]
	delete(m.profiles, workspaceID)
	m.mu.Unlock()
	for _, id := range panes {
		m.ClosePane(id)
	}
	if prof != nil {
		prof.close()
	}
}

// Activate shows a tab in its pane; a discarded tab is reloaded.
func (m *Manager) Activate(ctx context.Context, paneID, tabID string) (TabInfo, error) {
	if !m.ops.Enter() {
		return TabInfo{}, ErrClosed
	}
	defer m.ops.Done()
	p, t, err := m.tab(paneID, tabID)
	if err != nil {
		return TabInfo{}, err
	}
	m.activate(p, t)
	t.mu.Lock()
	discarded := t.conn == nil && !t.crashed
	t.mu.Unlock()
	if discarded {
		return m.reconnect(ctx, t)
	}
	return t.info(), nil
}

// activate makes t the pane's shown tab and moves the screencast to it.
func (m *Manager) activate(p *pane, t *tab) {
	m.mu.Lock()
	old := p.Show(t)
	watched := len(p.watchers) > 0
	m.mu.Unlock()
	if old != nil && old != t {
		old.update(func() { old.active = false })
		old.stopCast()
	}
	t.update(func() { t.active = true; t.touchLocked() })
	if watched {
		m.startCast(t)
	}
	m.publish(EventActivated, t, "")
}

// Reconnect gives the pane's active tab a new page at its last URL: after a crash, or to
// recover a page that stopped answering.
func (m *Manager) Reconnect(ctx context.Context, paneID string) (TabInfo, error) {
	if !m.ops.Enter() {
		return TabInfo{}, ErrClosed
	}
	defer m.ops.Done()
	_, t, err := m.tab(paneID, "")
	if err != nil {
		return TabInfo{}, err
	}
	return m.reconnect(ctx, t)
}

func (m *Manager) reconnect(ctx context.Context, t *tab) (TabInfo, error) {
	t.mu.Lock()
	old := t.conn
	t.conn = nil
	u := t.url
	t.mu.Unlock()
	if old != nil {
		old.cancel()
		<-old.done
	}
	prof, err := m.profileFor(ctx, t.ws)
	if err != nil {
		return t.info(), err
	}
	if err := t.connect(ctx, prof, ""); err != nil {
		return t.info(), err
	}
	t.notify()
	m.record(t, "reconnected", u, "")
	m.publish(EventReconnected, t, "")
	if t.info().Active {
		m.mu.Lock()
		p := m.panes[t.paneID]
		watched := p != nil && len(p.watchers) > 0
		m.mu.Unlock()
		if watched {
			m.startCast(t)
		}
	}
	if u != "" && u != "about:blank" {
		if _, err := m.navigate(ctx, t, u); err != nil {
			return t.info(), err
		}
	}
	return t.info(), nil
}

// SetViewport sets the size in CSS pixels of the pane's pages (every tab of the pane).
func (m *Manager) SetViewport(paneID string, width, height int) error {
	if width < 1 || height < 1 || width > maxDimension || height > maxDimension {
		return fmt.Errorf("viewport %dx%d is out of range: use 1-%d on each side", width, height, maxDimension)
	}
	m.mu.Lock()
	p := m.panes[paneID]
	if p == nil {
		m.mu.Unlock()
		return m.noPane(paneID)
	}
	p.width, p.height = width, height
	tabs := p.All()
	watched := len(p.watchers) > 0
	active := p.Active()
	m.mu.Unlock()
	var errs []error
	for _, t := range tabs {
		t.update(func() { t.width, t.height = width, height })
		if _, err := t.live(); err != nil {
			continue // a discarded or crashed tab takes the size when it comes back
		}
		ctx, cancel := context.WithTimeout(m.ctx, opTimeout)
		errs = append(errs, t.run(ctx, emulation.SetDeviceMetricsOverride(int64(width), int64(height), 1, false)))
		cancel()
	}
	if watched && active != nil {
		// The screencast's frame size follows the viewport only when restarted.
		active.stopCast()
		m.startCast(active)
	}
	return errors.Join(errs...)
}

package browser

import (
	"context"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// Navigate loads rawURL (a bare host gets https://) in the pane's active tab and waits for
// it to load, at most navTimeout.
func (m *Manager) Navigate(ctx context.Context, paneID, rawURL string) (PageInfo, error) {
	u, err := NormalizeURL(rawURL)
	if err != nil {
		return PageInfo{}, err
	}
	_, t, err := m.tab(paneID, "")
	if err != nil {
		return PageInfo{}, err
	}
	m.record(t, "navigate", u, "")
	return m.navigate(ctx, t, u)
}

func (m *Manager) navigate(ctx context.Context, t *tab, u string) (PageInfo, error) {
	mark := t.navMark()
	var errText string
	var download bool
	err := t.run(ctx, chromedp.ActionFunc(func(ctx context.Context) error {
		var err error
		_, _, errText, download, err = page.Navigate(u).Do(ctx)
		return err
	}))
	if err != nil {
		return PageInfo{}, err
	}
	if download {
		info := t.pageInfo()
		info.Download = true
		return info, nil
	}
	if errText != "" {
		t.waitLoaded(ctx, mark, time.Second) // the error page, briefly: the error is the news
		return t.pageInfo(), &NavigationError{URL: u, Reason: errText}
	}
	t.waitLoaded(ctx, mark, navTimeout)
	return t.pageInfo(), nil
}

// Back goes one page back in the active tab's history.
func (m *Manager) Back(ctx context.Context, paneID string) (PageInfo, error) {
	return m.history(ctx, paneID, -1)
}

// Forward goes one page forward in the active tab's history.
func (m *Manager) Forward(ctx context.Context, paneID string) (PageInfo, error) {
	return m.history(ctx, paneID, +1)
}

func (m *Manager) history(ctx context.Context, paneID string, step int) (PageInfo, error) {
	_, t, err := m.tab(paneID, "")
	if err != nil {
		return PageInfo{}, err
	}
	m.record(t, map[int]string{-1: "back", 1: "forward"}[step], "", "")
	mark := t.navMark()
	err = t.run(ctx, chromedp.ActionFunc(func(ctx context.Context) error {
		idx, entries, err := page.GetNavigationHistory().Do(ctx)
		if err != nil {
			return err
		}
		to := int(idx) + step
		if to < 0 || to >= len(entries) {
			return ErrNoHistory
		}
		return page.NavigateToHistoryEntry(entries[to].ID).Do(ctx)
	}))
	if err != nil {
		return PageInfo{}, err
	}
	t.waitLoaded(ctx, mark, navTimeout)
	return t.pageInfo(), nil
}

// Reload reloads the active tab's page.
func (m *Manager) Reload(ctx context.Context, paneID string) (PageInfo, error) {
	_, t, err := m.tab(paneID, "")
	if err != nil {
		return PageInfo{}, err
	}
	m.record(t, "reload", "", "")
	mark := t.navMark()
	if err := t.run(ctx, page.Reload()); err != nil {
		return PageInfo{}, err
	}
	t.waitLoaded(ctx, mark, navTimeout)
	return t.pageInfo(), nil
}

// WaitNavigation waits until the active tab has navigated since the last action the agent
// took on it (a click, a key, …) and the new page has loaded. A navigation that finished
// before the call counts, so "click, then wait" does not race.
func (m *Manager) WaitNavigation(ctx context.Context, paneID string, timeout time.Duration) (PageInfo, bool, error) {
	_, t, err := m.tab(paneID, "")
	if err != nil {
		return PageInfo{}, false, err
	}
	if _, err := t.live(); err != nil {
		return PageInfo{}, false, err
	}
	t.mu.Lock()
	mark := t.markSeq
	t.mu.Unlock()
	ok := t.waitLoaded(ctx, mark, timeout)
	if _, err := t.live(); err != nil {
		return PageInfo{}, false, err
	}
	return t.pageInfo(), ok, ctx.Err()
}

// navMark is the tab's navigation count now; waitLoaded waits for a later one.
func (t *tab) navMark() uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.navSeq
}

// actionStarted records that the agent is about to act on the page, for WaitNavigation.
func (t *tab) actionStarted() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.markSeq = t.navSeq
	t.touchLocked()
}

// waitLoaded waits until the main frame has navigated past mark and stopped loading. A page
// restored from the back/forward cache navigates without loading, which also counts.
func (t *tab) waitLoaded(ctx context.Context, mark uint64, d time.Duration) bool {
	return t.wait(ctx, d, func() bool { return t.navSeq > mark && !t.loading })
}

func (t *tab) pageInfo() PageInfo {
	t.mu.Lock()
	defer t.mu.Unlock()
	return PageInfo{TabID: t.id, URL: t.url, Title: t.title, Status: t.status, Loading: t.loading, Prompt: t.prompt}
}

package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/clusterspace/clusterspace/backend/browser"
	"github.com/clusterspace/clusterspace/backend/rpc"
)

// BrowserPaneArgs names a browser pane.
type BrowserPaneArgs struct {
	PaneID string `json:"paneId"`
}

// BrowserOpenArgs opens a pane's browser at url ("" = a blank page) if it has none; width and
// height (both > 0) are the pane's size, set at once so the first frame fits.
type BrowserOpenArgs struct {
	PaneID string `json:"paneId"`
	URL    string `json:"url"`
	Width  int    `json:"width,omitempty"`
	Height int    `json:"height,omitempty"`
}

// BrowserURLArgs is a pane and a URL (a bare host gets https://): a new tab or a navigation.
type BrowserURLArgs struct {
	PaneID string `json:"paneId"`
	URL    string `json:"url"`
}

// BrowserTabArgs names a tab of a browser pane.
type BrowserTabArgs struct {
	PaneID string `json:"paneId"`
	TabID  string `json:"tabId"`
}

// BrowserViewportArgs is the pane's size in CSS pixels.
type BrowserViewportArgs struct {
	PaneID string `json:"paneId"`
	Width  int    `json:"width"`
	Height int    `json:"height"`
}

// BrowserAnswerPromptArgs answers the question the pane's page asks (HTTP sign-in, a bad
// certificate). The password goes to the page and nowhere else.
type BrowserAnswerPromptArgs struct {
	PaneID string               `json:"paneId"`
	Answer browser.PromptAnswer `json:"answer"`
}

// BrowserTabsResult is a browser pane's tabs.
type BrowserTabsResult struct {
	Tabs []browser.TabInfo `json:"tabs"`
}

// browserError gives the browser's errors their status: no such pane or tab is 404; a page
// that cannot do it now (no history to go back to, a page that refuses) 409; anything else is
// Chromium missing, crashed or a page that would not load: the browser side failed, 502.
func browserError(err error) error {
	var pe *browser.PageError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, browser.ErrNoPane), errors.Is(err, browser.ErrNoTab):
		return &StatusError{Status: http.StatusNotFound, Err: err}
	case errors.Is(err, browser.ErrNoHistory), errors.As(err, &pe):
		return Conflict(err)
	}
	var st *StatusError
	if errors.As(err, &st) {
		return err
	}
	return &StatusError{Status: http.StatusBadGateway, Err: err}
}

func addBrowsers(t *rpc.Table, s Services) {
	b := s.Browsers
	// A browser starts only for a pane that exists, never for an id a client made up; each
	// workspace has its own browser profile.
	pane := func(ctx context.Context, id string) (workspaceID string, err error) {
		ws, ok := s.Workspaces.WorkspaceOf(ctx, id)
		if !ok {
			return "", &StatusError{Status: http.StatusNotFound, Err: fmt.Errorf("no pane %q in any workspace", id)}
		}
		return ws, nil
	}
	const base = "/api/panes/{paneId}/browser"
	rpc.Add(t, rpc.Method{Name: "BrowserOpen", Route: "POST " + base}, func(ctx context.Context, a BrowserOpenArgs) (BrowserTabsResult, error) {
		ws, err := pane(ctx, a.PaneID)
		if err != nil {
			return BrowserTabsResult{}, err
		}
		if _, _, err := b.Ensure(ctx, a.PaneID, ws, a.URL); err != nil {
			return BrowserTabsResult{}, browserError(err)
		}
		if a.Width > 0 && a.Height > 0 {
			b.SetViewport(a.PaneID, a.Width, a.Height) // Best effort: the view sends its size again.
		}
		return BrowserTabsResult{Tabs: b.Tabs(a.PaneID)}, nil
	})
	rpc.Add(t, rpc.Method{Name: "BrowserTabs", Route: "GET " + base + "/tabs"}, func(ctx context.Context, a BrowserPaneArgs) (BrowserTabsResult, error) {
		if _, err := pane(ctx, a.PaneID); err != nil {
			return BrowserTabsResult{}, err
		}
		return BrowserTabsResult{Tabs: b.Tabs(a.PaneID)}, nil
	})
	rpc.Add(t, rpc.Method{Name: "BrowserNewTab", Route: "POST " + base + "/tabs", Status: http.StatusCreated}, func(ctx context.Context, a BrowserURLArgs) (browser.TabInfo, error) {
		if _, err := pane(ctx, a.PaneID); err != nil {
			return browser.TabInfo{}, err
		}
		tab, err := b.NewTab(ctx, a.PaneID, a.URL)
		return tab, browserError(err)
	})
	rpc.Do(t, rpc.Method{Name: "BrowserCloseTab", Route: "DELETE " + base + "/tabs/{tabId}"}, func(ctx context.Context, a BrowserTabArgs) error {
		if _, err := pane(ctx, a.PaneID); err != nil {
			return err
		}
		return browserError(b.CloseTab(a.PaneID, a.TabID))
	})
	rpc.Add(t, rpc.Method{Name: "BrowserActivate", Route: "POST " + base + "/tabs/{tabId}/activate"}, func(ctx context.Context, a BrowserTabArgs) (browser.TabInfo, error) {
		if _, err := pane(ctx, a.PaneID); err != nil {
			return browser.TabInfo{}, err
		}
		tab, err := b.Activate(ctx, a.PaneID, a.TabID)
		return tab, browserError(err)
	})
	rpc.Add(t, rpc.Method{Name: "BrowserNavigate", Route: "POST " + base + "/navigate"}, func(ctx context.Context, a BrowserURLArgs) (browser.PageInfo, error) {
		if _, err := pane(ctx, a.PaneID); err != nil {
			return browser.PageInfo{}, err
		}
		page, err := b.Navigate(ctx, a.PaneID, a.URL)
		return page, browserError(err)
	})
	// Back, forward and reload move through the active tab's history and answer the page.
	history := func(name string, act func(ctx context.Context, paneID string) (browser.PageInfo, error)) {
		rpc.Add(t, rpc.Method{Name: "Browser" + name, Route: "POST " + base + "/" + strings.ToLower(name)}, func(ctx context.Context, a BrowserPaneArgs) (browser.PageInfo, error) {
			if _, err := pane(ctx, a.PaneID); err != nil {
				return browser.PageInfo{}, err
			}
			page, err := act(ctx, a.PaneID)
			return page, browserError(err)
		})
	}
	history("Back", b.Back)
	history("Forward", b.Forward)
	history("Reload", b.Reload)
	rpc.Do(t, rpc.Method{Name: "BrowserViewport", Route: "PUT " + base + "/viewport"}, func(ctx context.Context, a BrowserViewportArgs) error {
		if _, err := pane(ctx, a.PaneID); err != nil {
			return err
		}
		err := b.SetViewport(a.PaneID, a.Width, a.Height)
		if err != nil && !errors.Is(err, browser.ErrNoPane) {
			return &StatusError{Status: http.StatusBadRequest, Field: "width", Err: err}
		}
		return browserError(err)
	})
	rpc.Add(t, rpc.Method{Name: "BrowserReconnect", Route: "POST " + base + "/reconnect"}, func(ctx context.Context, a BrowserPaneArgs) (browser.TabInfo, error) {
		if _, err := pane(ctx, a.PaneID); err != nil {
			return browser.TabInfo{}, err
		}
		tab, err := b.Reconnect(ctx, a.PaneID)
		return tab, browserError(err)
	})
	rpc.Do(t, rpc.Method{Name: "BrowserAnswerPrompt", Route: "POST " + base + "/prompt", Body: "answer"}, func(ctx context.Context, a BrowserAnswerPromptArgs) error {
		if _, err := pane(ctx, a.PaneID); err != nil {
			return err
		}
		return browserError(b.AnswerPrompt(ctx, a.PaneID, a.Answer))
	})
}

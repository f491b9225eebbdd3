package main

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// Issue 16's UI against serve: the pane id chip, focus following clicks and the backend,
// maximize from the menu and Ctrl+Enter, Alt+Arrow, converting a busy pane (asked first), a
// template menu, and a workspace made through the API (as the agent's create_workspace does).
func TestPaneControlsInTheUIEndToEnd(t *testing.T) {
	srv, ctx := openApp(t)
	st := readState(t, ctx)
	a, b, c := st.Panes[0].ID, st.Panes[1].ID, st.Panes[2].ID
	pa, pb := paneSel(a), paneSel(b)
	step(t, ctx, "chips show the ids",
		waitJS(fmt.Sprintf(`document.querySelector(%q).textContent === %q`, pa+` [data-testid=pane-id]`, a)))
	term := fmt.Sprintf(`[data-testid=terminal][data-pane-id=%q]`, a)
	step(t, ctx, "click pane a's terminal: it gets focus, and the backend hears it",
		waitJS(fmt.Sprintf(`document.querySelector(%q)?.dataset.ready === 'true'`, term)),
		chromedp.Click(term),
		waitJS(fmt.Sprintf(`document.querySelector(%q).dataset.focused === 'true'`, pa)))
	waitFor(t, "the backend's focus is pane a", func() bool { return apiWorkspace(t, srv.URL).FocusedPaneID == a })
	step(t, ctx, "Alt+Right moves focus to pane b",
		chromedp.KeyEvent(kb.ArrowRight, chromedp.KeyModifiers(1)), // Alt
		waitJS(fmt.Sprintf(`document.querySelector(%q).dataset.focused === 'true'`, pb)))
	waitFor(t, "the backend's focus is pane b", func() bool { return apiWorkspace(t, srv.URL).FocusedPaneID == b })
	step(t, ctx, "Ctrl+Enter maximizes pane b",
		chromedp.KeyEvent(kb.Enter, chromedp.KeyModifiers(2)), // Ctrl
		waitJS(fmt.Sprintf(`document.querySelector(%q).dataset.maximized === 'true'`, pb)),
		waitJS(fmt.Sprintf(`getComputedStyle(document.querySelector(%q)).display === 'none'`, pa)))
	shot(t, ctx, "ui16-maximized")
	step(t, ctx, "the menu restores",
		chromedp.Click(pb+` [data-testid=pane-menu]`),
		chromedp.Click(fmt.Sprintf(`[data-testid=pane-menu-list][data-pane-id=%q] [data-testid=pane-menu-maximize]`, b)),
		waitJS(fmt.Sprintf(`document.querySelector(%q).dataset.maximized === 'false'`, pb)),
		waitJS(fmt.Sprintf(`getComputedStyle(document.querySelector(%q)).display !== 'none'`, pa)))

	step(t, ctx, "run something in pane a", chromedp.Click(term),
		chromedp.SendKeys(term+` textarea`, "sleep 300\r", chromedp.ByQuery))
	step(t, ctx, "convert pane a: asked first",
		chromedp.Sleep(700),
		chromedp.Click(pa+` [data-testid=pane-menu]`),
		chromedp.Click(fmt.Sprintf(`[data-testid=pane-menu-list][data-pane-id=%q] [data-testid=pane-menu-convert-browser]`, a)),
		chromedp.WaitVisible(`[data-testid=confirm-dialog]`),
		waitJS(`document.querySelector('[data-testid=confirm-dialog]').textContent.includes('sleep')`))
	shot(t, ctx, "ui16-confirm")
	step(t, ctx, "yes converts", chromedp.Click(`[data-testid=confirm-ok]`),
		waitJS(fmt.Sprintf(`document.querySelector(%q).dataset.kind === 'browser'`, pa)))

	pc := paneSel(c)
	step(t, ctx, "the template menu", chromedp.Click(pc+` [data-testid=pane-menu]`),
		chromedp.Click(`[data-testid=pane-menu-start-as]`),
		chromedp.WaitVisible(`[data-testid=launch-template-python]`))
	shot(t, ctx, "ui16-templates")
	step(t, ctx, "start as python", chromedp.Click(`[data-testid=launch-template-python]`),
		waitJS(fmt.Sprintf(`document.querySelector(%q).dataset.template === 'python'`, pc)),
		waitJS(fmt.Sprintf(`(window.__clusterspaceTerminalText?.(%q) ?? '').includes('>>>')`, c)))

	// The agent's side: focus and maximize changed through the API show in the UI.
	token0 := apiToken(t, srv.URL)
	wsID := readState(t, ctx).Active
	apiCall(t, "PUT", srv.URL+"/api/workspaces/"+wsID+"/focus", token0, map[string]any{"paneId": c}, nil)
	step(t, ctx, "the backend's focus shows, and the keyboard follows",
		waitJS(fmt.Sprintf(`document.querySelector(%q).dataset.focused === 'true'`, pc)),
		waitJS(fmt.Sprintf(`document.querySelector(%q).contains(document.activeElement)`, pc)))
	apiCall(t, "POST", srv.URL+"/api/workspaces/"+wsID+"/panes/"+b+"/maximize", token0, nil, nil)
	step(t, ctx, "the backend's maximize shows",
		waitJS(fmt.Sprintf(`document.querySelector(%q).dataset.maximized === 'true'`, pb)),
		waitJS(fmt.Sprintf(`getComputedStyle(document.querySelector(%q)).display === 'none'`, pc)))
	apiCall(t, "POST", srv.URL+"/api/workspaces/"+wsID+"/panes/"+b+"/maximize", token0, nil, nil)

	token := apiToken(t, srv.URL)
	apiCall(t, "POST", srv.URL+"/api/workspaces", token, map[string]any{"name": "Made elsewhere", "rows": 1, "cols": 3}, nil)
	step(t, ctx, "the new workspace shows in the tab bar",
		waitJS(`[...document.querySelectorAll('[data-testid=ws-tab-name]')].some(t => t.textContent.trim() === 'Made elsewhere')`))
	shot(t, ctx, "ui16-newws")
}

type wsFocus struct {
	FocusedPaneID   string `json:"focusedPaneId"`
	MaximizedPaneID string `json:"maximizedPaneId"`
}

func apiToken(t *testing.T, url string) string {
	var tokens struct{ AccessToken string }
	apiCall(t, "POST", url+"/api/login", "", map[string]string{"password": e2ePassword}, &tokens)
	return tokens.AccessToken
}

func apiWorkspace(t *testing.T, url string) wsFocus {
	var list struct {
		Workspaces []wsFocus
	}
	apiCall(t, "GET", url+"/api/workspaces", apiToken(t, url), nil, &list)
	return list.Workspaces[0]
}

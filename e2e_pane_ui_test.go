package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
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

func apiWorkspace(t *testing.T, url string) wsFocus {
	var list struct {
		Workspaces []wsFocus
	}
	apiCall(t, "GET", url+"/api/workspaces", apiToken(t, url), nil, &list)
	return list.Workspaces[0]
}

// childShells counts the serve process's live children that run a shell: one per terminal
// tab, read from /proc, apart from the app.
func childShells(ppid int) int {
	entries, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		f := strings.Fields(s[i+1:]) // state ppid …
		comm := s[strings.IndexByte(s, '(')+1 : i]
		if len(f) > 1 && f[0] != "Z" && f[1] == strconv.Itoa(ppid) && strings.HasSuffix(comm, "sh") {
			n++
		}
	}
	return n
}

// running reports whether a live process has exactly this command line.
func running(argv ...string) bool {
	want := strings.Join(argv, "\x00") + "\x00"
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && string(b) == want {
			if st, _ := os.ReadFile("/proc/" + e.Name() + "/stat"); !strings.Contains(string(st), ") Z ") {
				return true
			}
		}
	}
	return false
}

// Shrinking the grid over a pane whose shell runs a program asks first, listing what is
// busy; Cancel keeps everything, confirming ends the removed panes' shells and the program.
func TestGridShrinkAsksThenEndsTheRemovedShells(t *testing.T) {
	srv, ctx := openApp(t)
	state := readState(t, ctx)
	var bottom string
	for _, p := range state.Panes {
		if p.Row == "1" && p.Col == "0" {
			bottom = p.ID
		}
	}
	step(t, ctx, "wait for the four shells",
		waitJS(`document.querySelectorAll('[data-testid=terminal][data-ready=true]').length === 4`))
	pid := srv.cmd.Process.Pid
	waitFor(t, "four shells under serve", func() bool { return childShells(pid) == 4 })
	term := fmt.Sprintf(`[data-testid=terminal][data-pane-id=%q]`, bottom)
	step(t, ctx, "start a long program in a bottom pane",
		chromedp.Click(term),
		chromedp.SendKeys(term+` textarea`, "sleep 3017\r", chromedp.ByQuery))
	waitFor(t, "sleep 3017 to run", func() bool { return running("sleep", "3017") })

	step(t, ctx, "shrink to one row, see what is busy, cancel",
		pickOption(`[data-testid=grid-rows]`, "1"),
		chromedp.WaitVisible(`[data-testid=confirm-dialog] [data-testid=confirm-items]`),
		waitJS(`document.querySelector('[data-testid=confirm-items]').textContent.includes('sleep running')`))
	shot(t, ctx, "grid-shrink-busy")
	step(t, ctx, "cancel", chromedp.Click(`[data-testid=confirm-cancel]`),
		waitJS(`!document.querySelector('[data-testid=confirm-dialog]')`),
		waitJS(`document.querySelector('[data-testid=grid-rows]').value === '2'`))
	if got := readState(t, ctx); got.Rows != "2" || !running("sleep", "3017") || childShells(pid) != 4 {
		t.Fatalf("Cancel changed something: rows %s, sleep running %v, %d shells", got.Rows, running("sleep", "3017"), childShells(pid))
	}

	step(t, ctx, "shrink again and confirm",
		pickOption(`[data-testid=grid-rows]`, "1"),
		chromedp.WaitVisible(`[data-testid=confirm-dialog]`),
		chromedp.Click(`[data-testid=confirm-ok]`),
		waitJS(`document.querySelector('[data-testid=pane-grid]').dataset.rows === '1'`))
	waitFor(t, "the removed panes' processes to end", func() bool { return !running("sleep", "3017") && childShells(pid) == 2 })
	t.Logf("shells under serve: 4 before the 2×2 → 1×2 shrink, %d after", childShells(pid))
}

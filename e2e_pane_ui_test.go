package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/clusterspace/clusterspace/backend/procstat"
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
	// The question names what runs: wait until the shell's child is sleep itself (on a loaded
	// machine the keys, the fork and the exec each take their time).
	var tabs struct{ Tabs []struct{ PID int } }
	apiCall(t, "GET", srv.URL+"/api/panes/"+a+"/terminal/tabs", apiToken(t, srv.URL), nil, &tabs)
	waitWithin(t, 20*time.Second, "sleep to run in pane a's shell", func() bool {
		for _, p := range procstat.All() {
			if p.Comm == "sleep" && p.Parent() == tabs.Tabs[0].PID {
				return true
			}
		}
		return false
	})
	step(t, ctx, "convert pane a: asked first",
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
	n := 0
	for _, p := range procstat.All() {
		if !p.Zombie() && p.Parent() == ppid && strings.HasSuffix(p.Comm, "sh") {
			n++
		}
	}
	return n
}

// running reports whether a live process has exactly this command line.
func running(argv ...string) bool {
	want := strings.Join(argv, "\x00") + "\x00"
	for _, p := range procstat.All() {
		if !p.Zombie() && p.Cmdline() == want { // a zombie has ended
			return true
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

func center(ctx context.Context, sel string) (float64, float64, error) {
	var box []float64
	err := chromedp.Evaluate(fmt.Sprintf(`(() => { const r = document.querySelector(%q).getBoundingClientRect(); return [r.x + r.width/2, r.y + r.height/2]; })()`, sel), &box).Do(ctx)
	if err != nil || len(box) != 2 {
		return 0, 0, fmt.Errorf("locate %s: %v", sel, err)
	}
	return box[0], box[1], nil
}

// dragMouse presses the left button on from, moves in steps to to, and releases: real input
// events, as a person's mouse makes them.
func dragMouse(from, to string) chromedp.Action {
	return chromedp.ActionFunc(func(ctx context.Context) error {
		x1, y1, err := center(ctx, from)
		if err != nil {
			return err
		}
		x2, y2, err := center(ctx, to)
		if err != nil {
			return err
		}
		if err := input.DispatchMouseEvent(input.MouseMoved, x1, y1).Do(ctx); err != nil {
			return err
		}
		if err := input.DispatchMouseEvent(input.MousePressed, x1, y1).WithButton(input.Left).WithButtons(1).WithClickCount(1).Do(ctx); err != nil {
			return err
		}
		const steps = 12
		for i := 1; i <= steps; i++ {
			x := x1 + (x2-x1)*float64(i)/steps
			y := y1 + (y2-y1)*float64(i)/steps
			if err := input.DispatchMouseEvent(input.MouseMoved, x, y).WithButton(input.Left).WithButtons(1).Do(ctx); err != nil {
				return err
			}
			time.Sleep(15 * time.Millisecond)
		}
		return input.DispatchMouseEvent(input.MouseReleased, x2, y2).WithButton(input.Left).WithButtons(0).WithClickCount(1).Do(ctx)
	})
}

// dragBy drags the element's centre by (dx, dy) pixels with the left button held.
func dragBy(sel string, dx, dy float64) chromedp.Action {
	return chromedp.ActionFunc(func(ctx context.Context) error {
		x, y, err := center(ctx, sel)
		if err != nil {
			return err
		}
		if err := input.DispatchMouseEvent(input.MousePressed, x, y).WithButton(input.Left).WithButtons(1).WithClickCount(1).Do(ctx); err != nil {
			return err
		}
		const steps = 8
		for i := 1; i <= steps; i++ {
			if err := input.DispatchMouseEvent(input.MouseMoved, x+dx*float64(i)/steps, y+dy*float64(i)/steps).WithButton(input.Left).WithButtons(1).Do(ctx); err != nil {
				return err
			}
		}
		return input.DispatchMouseEvent(input.MouseReleased, x+dx, y+dy).WithButton(input.Left).WithClickCount(1).Do(ctx)
	})
}

// TestBrowserEndToEnd drives the real UI in headless Chromium against `clusterspace serve`.
func TestBrowserEndToEnd(t *testing.T) {
	dataDir := t.TempDir()
	srv := startServe(t, dataDir, e2ePassword)
	ctx := newBrowser(t)

	// Log in: a wrong password first shows the server's message.
	step(t, ctx, "open the login page",
		chromedp.Navigate(srv.URL),
		chromedp.WaitVisible(`[data-testid=login-password]`))
	step(t, ctx, "log in with a wrong password",
		chromedp.SendKeys(`[data-testid=login-password]`, "wrong"),
		chromedp.Click(`[data-testid=login-submit]`),
		waitJS(`(document.querySelector('[data-testid=login-error]')?.textContent ?? '').includes('wrong password')`))
	step(t, ctx, "log in",
		chromedp.SendKeys(`[data-testid=login-password]`, strings.Repeat(kb.Backspace, 12)+e2ePassword),
		chromedp.Click(`[data-testid=login-submit]`),
		chromedp.WaitVisible(`[data-testid=app-ready]`))

	first := readState(t, ctx)
	if len(first.Tabs) != 1 || first.Tabs[0] != "Workspace 1" || first.Rows != "2" || first.Cols != "2" || len(first.Panes) != 4 {
		t.Fatalf("first run should show Workspace 1 as a 2x2 grid: %+v", first)
	}

	// Create a workspace: it becomes the active tab.
	step(t, ctx, "create a workspace",
		chromedp.Click(`[data-testid=ws-new]`),
		waitJS(`document.querySelectorAll('[data-testid=ws-tab]').length === 2`),
		waitJS(`document.querySelectorAll('[data-testid=ws-tab]')[1].dataset.active === 'true'`))

	// Change the grid to 3 rows x 2 columns with the selectors, as a user would (keyboard on a focused select).
	step(t, ctx, "set the grid to 3x2",
		chromedp.SendKeys(`select[data-testid=grid-rows]`, "3"),
		waitJS(`document.querySelector('[data-testid=pane-grid]').dataset.rows === '3'`),
		chromedp.SendKeys(`select[data-testid=grid-cols]`, "2"),
		waitJS(`document.querySelector('[data-testid=pane-grid]').dataset.cols === '2'`),
		waitJS(`document.querySelectorAll('[data-testid=pane]').length === 6`))
	before := readState(t, ctx)
	var a, b paneCell
	for _, p := range before.Panes {
		if p.Row == "0" && p.Col == "0" {
			a = p
		}
		if p.Row == "2" && p.Col == "1" {
			b = p
		}
	}
	if a.ID == "" || b.ID == "" {
		t.Fatalf("no panes at (0,0) and (2,1): %+v", before.Panes)
	}

	// Swap (0,0) and (2,1) by dragging the first pane's header onto the second pane.
	step(t, ctx, "drag a pane onto another",
		dragMouse(paneSel(a.ID)+` [data-testid=pane-kind]`, paneSel(b.ID)),
		waitJS(fmt.Sprintf(`document.querySelector(%q)?.dataset.row === '2'`, paneSel(a.ID))))
	// Drag the divider between rows 1 and 2 down: the first row grows, and it is saved.
	var heightBefore, heightAfter float64
	rowHeight := fmt.Sprintf(`document.querySelector(%q).getBoundingClientRect().height`, paneSel(b.ID))
	step(t, ctx, "drag a row divider",
		chromedp.Evaluate(rowHeight, &heightBefore),
		dragBy(`[data-testid=row-divider][data-index="0"]`, 0, 80),
		waitJS(fmt.Sprintf(`%s > %f`, rowHeight, heightBefore+40)),
		chromedp.Evaluate(rowHeight, &heightAfter))
	swapped := readState(t, ctx)
	shot(t, ctx, "swapped")

	// Reload: the same state comes back from the server.
	step(t, ctx, "reload", chromedp.Reload(), chromedp.WaitVisible(`[data-testid=app-ready]`),
		waitJS(`document.querySelectorAll('[data-testid=pane]').length === 6`))
	after := readState(t, ctx)
	if fmt.Sprint(after) != fmt.Sprint(swapped) {
		t.Fatalf("state changed across a reload:\nbefore %+v\nafter  %+v", swapped, after)
	}
	for _, p := range after.Panes {
		if p.ID == a.ID && (p.Row != "2" || p.Col != "1") || p.ID == b.ID && (p.Row != "0" || p.Col != "0") {
			t.Fatalf("swap not kept after reload: %+v", after.Panes)
		}
	}
	if len(after.Tabs) != 2 || after.Active != swapped.Active || after.Rows != "3" || after.Cols != "2" {
		t.Fatalf("after reload: %+v", after)
	}
	var heightReloaded float64
	step(t, ctx, "measure the resized row", chromedp.Evaluate(rowHeight, &heightReloaded))
	if heightReloaded < heightAfter-2 || heightReloaded > heightAfter+2 {
		t.Fatalf("row height %.0f px after reload, %.0f px before: the divider drag was not saved", heightReloaded, heightAfter)
	}

	// The command palette, by keyboard only: Ctrl+Shift+P, filter, Enter.
	step(t, ctx, "set the grid from the command palette",
		paletteCommand("grid 3x3", "3×3"),
		waitJS(`document.querySelector('[data-testid=pane-grid]').dataset.cols === '3'`),
		waitJS(`!document.querySelector('[data-testid=palette]')`))
	after = readState(t, ctx)
	if after.Rows != "3" || len(after.Panes) != 9 {
		t.Fatalf("after the palette command: %+v", after)
	}

	// Import a broken file: the error is shown and nothing changes.
	broken := tempFile(t, "broken.json", `{"format": "clusterspace.workspace", "version": 1, "workspace": {`)
	step(t, ctx, "import a broken file",
		chromedp.SetUploadFiles(`input[data-testid=ws-import-input]`, []string{broken}, chromedp.ByQuery),
		waitJS(`(document.querySelector('[data-testid=error-banner]')?.textContent ?? '').includes('cannot import this file')`))
	shot(t, ctx, "import-error")
	if got := readState(t, ctx); fmt.Sprint(got) != fmt.Sprint(after) {
		t.Fatalf("a refused import changed the UI:\nbefore %+v\nafter  %+v", after, got)
	}
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

const e2ePassword = "e2e-password-1"

// chromiumPath finds the Chromium that scripts/setup.sh installs.
func chromiumPath(t testing.TB) string {
	t.Helper()
	for _, p := range []string{os.Getenv("CLUSTERSPACE_CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"} {
		if p == "" {
			continue
		}
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Fatal("no Chromium found: run scripts/setup.sh (it installs the chromium package) or set CLUSTERSPACE_CHROMIUM")
	return ""
}

// newBrowser starts headless Chromium with the flags that work as root and offline.
func newBrowser(t testing.TB) context.Context {
	t.Helper()
	// Not t.TempDir: Chromium's helper processes can still be writing the profile for a
	// moment after the browser exits, and TempDir's cleanup fails the test when it cannot
	// remove a file. This dir is removed after the browser, with a short retry.
	profile, err := os.MkdirTemp("", "clusterspace-e2e-profile-")
	if err != nil {
		t.Fatal(err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath(t)),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1280, 800),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancel()
		cancelA()
		for range 20 {
			if os.RemoveAll(profile) == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Logf("could not remove the browser profile %s; it is left in the temp dir", profile)
	})
	if err := chromedp.Run(ctx); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	return ctx
}

// step runs chromedp actions with a deadline, failing the test with what was being done.
func step(t testing.TB, ctx context.Context, what string, actions ...chromedp.Action) {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Run(tctx, actions...); err != nil {
		shot(t, ctx, "failure-"+sanitize(what))
		t.Fatalf("%s: %v", what, err)
	}
}

func sanitize(s string) string {
	out := []rune{}
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			out = append(out, r)
		} else if len(out) > 0 && out[len(out)-1] != '-' {
			out = append(out, '-')
		}
	}
	return string(out)
}

// shot saves a screenshot of the page to the artifacts dir.
func shot(t testing.TB, ctx context.Context, name string) {
	var png []byte
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := chromedp.Run(sctx, chromedp.CaptureScreenshot(&png)); err != nil {
		t.Logf("screenshot %s: %v", name, err)
		return
	}
	path := filepath.Join(artifactDir(t), "e2e-"+name+".png")
	os.WriteFile(path, png, 0o644)
	t.Logf("screenshot: %s", path)
}

// waitJS polls a JavaScript expression until it is true.
func waitJS(expr string) chromedp.Action {
	var ok bool
	return chromedp.Poll(expr, &ok, chromedp.WithPollingTimeout(15*time.Second), chromedp.WithPollingInterval(50*time.Millisecond))
}

type paneCell struct {
	ID    string `json:"id"`
	Row   string `json:"row"`
	Col   string `json:"col"`
	Label string `json:"label"`
}

// uiState reads what the page shows: tabs, the active tab, the grid and its panes.
type uiState struct {
	Tabs   []string   `json:"tabs"`
	Active string     `json:"active"`
	Rows   string     `json:"rows"`
	Cols   string     `json:"cols"`
	Panes  []paneCell `json:"panes"`
}

const readUI = `(() => {
  const tabs = [...document.querySelectorAll('[data-testid=ws-tab]')];
  const grid = document.querySelector('[data-testid=pane-grid]');
  return JSON.stringify({
    tabs: tabs.map(t => t.querySelector('[data-testid=ws-tab-name]')?.textContent.trim() ?? ''),
    active: tabs.find(t => t.dataset.active === 'true')?.dataset.wsId ?? '',
    rows: grid?.dataset.rows ?? '', cols: grid?.dataset.cols ?? '',
    panes: [...document.querySelectorAll('[data-testid=pane]')].map(p => ({id: p.dataset.paneId, row: p.dataset.row, col: p.dataset.col, label: p.dataset.label})),
  });
})()`

func readState(t testing.TB, ctx context.Context) uiState {
	t.Helper()
	var raw string
	step(t, ctx, "read the UI", chromedp.Evaluate(readUI, &raw))
	var s uiState
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		t.Fatalf("UI state %q: %v", raw, err)
	}
	return s
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

func paneSel(id string) string { return fmt.Sprintf(`[data-testid=pane][data-pane-id=%q]`, id) }

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
		chromedp.KeyEvent("p", chromedp.KeyModifiers(input.ModifierCtrl|input.ModifierShift)),
		chromedp.WaitVisible(`[data-testid=palette-input]`),
		chromedp.SendKeys(`[data-testid=palette-input]`, "grid 3x3"),
		waitJS(`document.querySelector('[data-testid=palette-item][data-selected=true]')?.textContent.includes('3×3')`),
		chromedp.KeyEvent(kb.Enter),
		waitJS(`document.querySelector('[data-testid=pane-grid]').dataset.cols === '3'`),
		waitJS(`!document.querySelector('[data-testid=palette]')`))
	after = readState(t, ctx)
	if after.Rows != "3" || len(after.Panes) != 9 {
		t.Fatalf("after the palette command: %+v", after)
	}

	// Import a broken file: the error is shown and nothing changes.
	broken := filepath.Join(t.TempDir(), "broken.json")
	os.WriteFile(broken, []byte(`{"format": "clusterspace.workspace", "version": 1, "workspace": {`), 0o644)
	step(t, ctx, "import a broken file",
		chromedp.SetUploadFiles(`input[data-testid=ws-import-input]`, []string{broken}, chromedp.ByQuery),
		waitJS(`(document.querySelector('[data-testid=error-banner]')?.textContent ?? '').includes('cannot import this file')`))
	shot(t, ctx, "import-error")
	if got := readState(t, ctx); fmt.Sprint(got) != fmt.Sprint(after) {
		t.Fatalf("a refused import changed the UI:\nbefore %+v\nafter  %+v", after, got)
	}
}

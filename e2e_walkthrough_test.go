package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

// The walkthrough of issue #29 found text on the goal and fleet dashboards that could not be
// read, a dependency preview squeezed to a sliver, panes cut to "Termin…" beside the chat and
// the goals panel, and a running goal's clock stuck at "0 ms". These tests look at the served
// UI in headless Chromium as a person would meet it, in both palettes where colour is at stake.

// contrastJS defines window.__contrast(el): the WCAG contrast ratio of an element's text
// against what is drawn behind it (the backgrounds of it and its ancestors composited, over
// white), from the computed styles the page really uses.
const contrastJS = `window.__contrast = (el) => {
  const parse = (s) => {
    const m = /rgba?\(([^)]+)\)/.exec(s);
    if (!m) return null;
    const p = m[1].split(/[\s,\/]+/).filter(Boolean).map(Number);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  };
  const over = (top, under) => {
    const a = top[3] + under[3] * (1 - top[3]);
    return [0, 1, 2].map((i) => (top[i] * top[3] + under[i] * under[3] * (1 - top[3])) / a).concat([a]);
  };
  const layers = [];
  for (let n = el; n; n = n.parentElement) {
    const c = parse(getComputedStyle(n).backgroundColor);
    if (c && c[3] > 0) {
      layers.push(c);
      if (c[3] >= 1) break;
    }
  }
  let bg = [255, 255, 255, 1];
  for (let i = layers.length - 1; i >= 0; i--) bg = over(layers[i], bg);
  const fg = over(parse(getComputedStyle(el).color), bg);
  const lum = (c) => {
    const [r, g, b] = c.slice(0, 3).map((v) => {
      v /= 255;
      return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const a = lum(fg), b = lum(bg);
  return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
}; true`

// lowContrast lists the elements a CSS selector picks whose text is below WCAG AA for
// normal text (4.5:1), each with its text and ratio; it fails when the selector picks none.
func lowContrast(t *testing.T, ctx context.Context, what, sel string) []string {
	t.Helper()
	var raw string
	step(t, ctx, "measure the contrast of "+what,
		chromedp.Evaluate(contrastJS, nil),
		chromedp.Evaluate(fmt.Sprintf(`JSON.stringify([...document.querySelectorAll(%q)].map(el => ({text: el.textContent.trim(), ratio: window.__contrast(el)})))`, sel), &raw))
	var got []struct {
		Text  string
		Ratio float64
	}
	if err := json.Unmarshal([]byte(raw), &got); err != nil {
		t.Fatalf("contrast of %s: %q: %v", what, raw, err)
	}
	if len(got) == 0 {
		t.Fatalf("no %s on the page (%s) to measure", what, sel)
	}
	var low []string
	for _, g := range got {
		if g.Ratio < 4.5 {
			low = append(low, fmt.Sprintf("%q at %.2f:1", g.Text, g.Ratio))
		}
	}
	return low
}

// shownDuration reads the goal's time as the page writes it ("850 ms", "12.3 s", "2m 05s",
// "1h 02m", then maybe " of 1h").
func shownDuration(t *testing.T, shown string) time.Duration {
	t.Helper()
	text, _, _ := strings.Cut(shown, " of ")
	text = strings.NewReplacer(" ms", "ms", " s", "s", " ", "").Replace(strings.TrimSpace(text))
	d, err := time.ParseDuration(text)
	if err != nil {
		t.Fatalf("the goal's time reads %q, not a duration: %v", shown, err)
	}
	return d
}

// inBothThemes runs check with the light palette, then the dark one, then puts the page's
// own choice back.
func inBothThemes(t *testing.T, ctx context.Context, check func(theme string)) {
	t.Helper()
	var was string
	step(t, ctx, "read the theme", chromedp.Evaluate(`document.documentElement.dataset.theme ?? ''`, &was))
	for _, theme := range []string{"light", "dark"} {
		step(t, ctx, "show the "+theme+" palette", chromedp.Evaluate(fmt.Sprintf(`document.documentElement.dataset.theme = %q`, theme), nil))
		check(theme)
	}
	step(t, ctx, "put the theme back", chromedp.Evaluate(fmt.Sprintf(`document.documentElement.dataset.theme = %q`, was), nil))
}

// TestWalkthroughGoalDashboardReadable: a goal works through a terminal tool, a browser tool,
// a goal tool and a long wait. While it runs, the dashboard's clock shows real time and
// counts up; the step log's tool names are readable in both palettes; once the goal is done,
// its "completed" badges are readable; axe finds nothing serious on the dashboard.
func TestWalkthroughGoalDashboardReadable(t *testing.T) {
	model := llmtest.New(t, llmtest.Script{})
	srv := startServe(t, t.TempDir(), e2ePassword)
	addScriptedProvider(t, srv, model)
	token := apiToken(t, srv.URL)
	pane := firstWorkspace(t, srv, token).Panes[0].ID

	release := make(chan struct{})
	var released atomic.Bool
	var waits atomic.Int64
	model.Push(
		llmtest.Calls(
			llmtest.Call("read_terminal_output", map[string]any{"pane_id": pane}),
			llmtest.Call("browser_list_recipes", map[string]any{}),
			llmtest.Call("write_todos", map[string]any{"items": []string{"Look around", "Claim it"}})),
		// Long waits: nothing is saved during one, so only a clock that counts on by itself
		// moves (the walkthrough's "0 ms of 1h"). The test lets the goal end.
		llmtest.Reply{Repeat: 1 << 30, Compute: func(llmtest.Request) llmtest.Reply {
			select {
			case <-release:
				if released.CompareAndSwap(false, true) {
					return toolCall("claim_complete", map[string]string{"rationale": "looked around"})
				}
				return llmtest.Text("done")
			case <-time.After(50 * time.Millisecond):
				// Each wait a little different, so the loop guard sees no repetition.
				return toolCall("wait", map[string]int{"ms": 6000 + int(waits.Add(1))})
			}
		}},
	)
	zero := 0
	var g struct{ ID string }
	apiCall(t, "POST", srv.URL+"/api/goals", token, map[string]any{
		"paneId": pane, "goal": "Look around the workspace", "criterion": map[string]string{"kind": "manual"},
		"policy":   map[string]string{"risk": "write_local"},
		"settings": map[string]any{"criticIntervalSteps": zero, "wallClock": "1h"},
	}, &g)

	ctx := newBrowser(t)
	logIn(t, ctx, srv.URL, e2ePassword)
	step(t, ctx, "open the goal dashboard from the status bar",
		chromedp.Click(`[data-testid=status-goals]`),
		chromedp.WaitVisible(`[data-testid=goal-dashboard]`))
	// Read while the first long wait runs: its step is not in yet.
	step(t, ctx, "the running goal shows its terminal, browser and goal steps",
		waitJS(detailStatus("running")),
		waitJS(`['terminal', 'browser', 'goal'].every(f => document.querySelector('[data-testid=step-log] .tool[data-family=' + f + ']'))`))

	// The clock: more than nothing, and counting while the goal runs, as the page shows it.
	elapsed := func() (string, time.Duration) {
		var shown string
		step(t, ctx, "read the goal's time", chromedp.Evaluate(`(() => {
			const dt = [...document.querySelectorAll('[data-testid=goal-usage] dt')].find(d => d.textContent.trim() === 'Time');
			return dt?.nextElementSibling?.textContent.trim() ?? '';
		})()`, &shown))
		return shown, shownDuration(t, shown)
	}
	firstText, first := elapsed()
	time.Sleep(2200 * time.Millisecond)
	secondText, second := elapsed()
	t.Logf("the running goal's time read %q, then %q", firstText, secondText)
	if first <= 0 || second < first+1500*time.Millisecond {
		t.Errorf("while the goal runs its time reads %q, then %q 2.2 s later: want more than 0 and rising with the clock", firstText, secondText)
	}

	inBothThemes(t, ctx, func(theme string) {
		if low := lowContrast(t, ctx, "the step log's tool names", `[data-testid=step-log] .tool`); len(low) > 0 {
			t.Errorf("%s palette: tool names in the step log below 4.5:1: %s", theme, strings.Join(low, ", "))
		}
	})
	inBothThemes(t, ctx, func(theme string) {
		axeCheck(t, ctx, "goal dashboard with a running goal, "+theme+" palette", `[data-testid=goal-dashboard]`)
	})

	close(release)
	step(t, ctx, "the goal completes", chromedp.Poll(detailStatus("completed"), nil, chromedp.WithPollingTimeout(18*time.Second)))
	inBothThemes(t, ctx, func(theme string) {
		if low := lowContrast(t, ctx, "the completed badges", `[data-testid=goal-status][data-status=completed]`); len(low) > 0 {
			t.Errorf("%s palette: completed badges below 4.5:1: %s", theme, strings.Join(low, ", "))
		}
	})
	inBothThemes(t, ctx, func(theme string) {
		axeCheck(t, ctx, "goal dashboard with a completed goal and its step log, "+theme+" palette", `[data-testid=goal-dashboard]`)
	})
	shot(t, ctx, "walkthrough-goal-dashboard")
}

// TestWalkthroughFleetDashboardReadable: a fleet whose first task completes while the second
// works. The completed badges and the Abort fleet button are readable in both palettes, axe
// finds nothing serious on the dashboard, and in the Composer the dependency preview shows
// at its drawing's full height.
func TestWalkthroughFleetDashboardReadable(t *testing.T) {
	var waits atomic.Int64
	model := everyTurn(t, func(req llmtest.Request) llmtest.Reply {
		pane := req.Pane()
		switch {
		case pane == "":
			return llmtest.Text("no pane")
		case pane == "first-term":
			return toolCall("claim_complete", map[string]string{"rationale": "made"})
		default:
			return waitUntilAborted(&waits)
		}
	})
	srv, ctx, token, fleetID := openAppOnFleet(t, model, `name: pair
tasks:
  - id: first
    goal: Make the thing
    pane: first-term
    role: Builder
    check_shell: "true"
  - id: second
    goal: Use the thing
    pane: second-term
    depends_on: [first]
    check_manual: true
`)
	defer apiCall(t, "POST", srv.URL+"/api/fleets/"+fleetID+"/abort", token, map[string]any{}, nil)

	openFleetDashboard(t, ctx,
		chromedp.WaitVisible(`[data-testid=fleet-detail]`),
		waitJS(`document.querySelector('[data-testid=task-card][data-task=first]')?.dataset.status === 'completed'`),
		waitJS(`document.querySelector('[data-testid=task-card][data-task=second]')?.dataset.status === 'running'`),
		chromedp.WaitVisible(`[data-testid=fleet-abort]`))

	inBothThemes(t, ctx, func(theme string) {
		if low := lowContrast(t, ctx, "the Abort fleet button", `[data-testid=fleet-abort]`); len(low) > 0 {
			t.Errorf("%s palette: Abort fleet below 4.5:1: %s", theme, strings.Join(low, ", "))
		}
		if low := lowContrast(t, ctx, "the completed badges", `[data-testid=fleet-dashboard] [data-status=completed]:is([data-testid=task-status], [data-testid=fleet-status], [data-testid=fleet-row-status], [data-testid=agent-status])`); len(low) > 0 {
			t.Errorf("%s palette: completed badges below 4.5:1: %s", theme, strings.Join(low, ", "))
		}
	})
	inBothThemes(t, ctx, func(theme string) {
		axeCheck(t, ctx, "fleet dashboard, "+theme+" palette", `[data-testid=fleet-dashboard]`)
	})
	shot(t, ctx, "walkthrough-fleet-dashboard")

	step(t, ctx, "open the Composer on the fleet's file, with its dependency preview",
		chromedp.Click(`[data-testid=fleet-edit]`),
		chromedp.WaitVisible(`[data-testid=fleet-composer]`),
		waitJS(`!!document.querySelector('[data-testid=composer-graph] [data-testid=graph-edge][data-from=first][data-to=second]')`))
	var box struct{ Shown, Drawn float64 }
	var raw string
	step(t, ctx, "measure the preview", chromedp.Evaluate(`(() => {
		const svg = document.querySelector('[data-testid=composer-graph]');
		return JSON.stringify({shown: svg.parentElement.getBoundingClientRect().height, drawn: svg.getBoundingClientRect().height});
	})()`, &raw))
	if err := json.Unmarshal([]byte(raw), &box); err != nil {
		t.Fatal(err)
	}
	if box.Drawn < 40 || box.Shown < box.Drawn {
		t.Errorf("the Composer's dependency preview shows %.0f px of its %.0f px drawing", box.Shown, box.Drawn)
	}
	inBothThemes(t, ctx, func(theme string) {
		axeCheck(t, ctx, "fleet composer, "+theme+" palette", `[data-testid=fleet-composer]`)
	})
	shot(t, ctx, "walkthrough-fleet-composer")
}

// minPaneWidthPx is the width a pane keeps beside open side panels: its header then shows
// its kind, title, id and tabs whole.
const minPaneWidthPx = 360

// TestWalkthroughPanesHoldBesideSidePanels: at 1280×800 with the chat and the goals panel
// (docked beside the panes) open, every pane keeps its title, id and tabs whole.
func TestWalkthroughPanesHoldBesideSidePanels(t *testing.T) {
	_, ctx := openApp(t)
	step(t, ctx, "open the chat and the goals beside the panes",
		chromedp.WaitVisible(`[data-testid=terminal-tab]`),
		chromedp.Click(`[data-testid=status-chat]`),
		chromedp.WaitVisible(`[data-testid=chat-panel]`),
		chromedp.Click(`[data-testid=status-goals]`),
		chromedp.WaitVisible(`[data-testid=goal-dashboard]`),
		waitJS(`document.querySelector('[data-testid=goal-dashboard]').dataset.docked === 'true' || (document.querySelector('[data-testid=goal-dashboard-dock]').click(), false)`),
		chromedp.Sleep(300)) // the layout settles
	shot(t, ctx, "walkthrough-side-panels")
	var raw string
	step(t, ctx, "measure each pane's header", chromedp.Evaluate(`JSON.stringify([...document.querySelectorAll('[data-testid=pane]')].map(p => ({
		id: p.dataset.paneId,
		width: Math.round(p.getBoundingClientRect().width),
		cut: [...p.querySelectorAll('[data-testid=pane-title], [data-testid=pane-id], [data-testid=terminal-tab] .text, [data-testid=pane-kind]')]
			.filter(el => el.scrollWidth > el.clientWidth + 1 || el.getBoundingClientRect().width < 1)
			.map(el => el.dataset.testid || el.closest('[data-testid]').dataset.testid),
		// What lies over the header's ends and its menu button: another panel there hides it.
		covered: [p.querySelector('[data-testid=pane-kind]'), p.querySelector('[data-testid=pane-menu]')].filter(el => {
			const r = el.getBoundingClientRect();
			const hit = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
			return !hit || !p.contains(hit);
		}).map(el => el.dataset.testid),
	})))`, &raw))
	var panes []struct {
		ID      string
		Width   int
		Cut     []string
		Covered []string
	}
	if err := json.Unmarshal([]byte(raw), &panes); err != nil || len(panes) == 0 {
		t.Fatalf("panes %q: %v", raw, err)
	}
	for _, p := range panes {
		t.Logf("pane %s: %d px wide", p.ID, p.Width)
		if len(p.Cut) > 0 {
			t.Errorf("pane %s (%d px wide) cuts its %s", p.ID, p.Width, strings.Join(p.Cut, ", "))
		}
		if len(p.Covered) > 0 {
			t.Errorf("pane %s has its %s covered by another panel", p.ID, strings.Join(p.Covered, ", "))
		}
		if p.Width < minPaneWidthPx {
			t.Errorf("pane %s is %d px wide beside the side panels: want at least %d", p.ID, p.Width, minPaneWidthPx)
		}
	}
}

// TestWalkthroughPaneMenuKeyboard: a pane's ⋮ menu is worked with the keyboard alone: the first
// item takes the focus, ↓ and End move through the items, Esc closes the menu and gives the
// focus back to the button that opened it.
func TestWalkthroughPaneMenuKeyboard(t *testing.T) {
	_, ctx := openApp(t)
	focused := `(document.activeElement?.dataset.testid ?? '')`
	step(t, ctx, "open the first pane's menu",
		chromedp.WaitVisible(`[data-testid=pane-menu]`),
		chromedp.Click(`[data-testid=pane-menu]`),
		chromedp.WaitVisible(`[data-testid=pane-menu-list]`),
		waitJS(focused+` === 'pane-menu-maximize'`))
	step(t, ctx, "the arrows and End move through the items",
		chromedp.KeyEvent(kb.ArrowDown),
		waitJS(focused+` === 'pane-menu-convert-browser'`),
		chromedp.KeyEvent(kb.End),
		waitJS(focused+` === 'pane-menu-copy-id'`),
		chromedp.KeyEvent(kb.ArrowDown),
		waitJS(focused+` === 'pane-menu-maximize'`))
	step(t, ctx, "Esc closes the menu and the focus is back on its button",
		chromedp.KeyEvent(kb.Escape),
		waitJS(`!document.querySelector('[data-testid=pane-menu-list]')`),
		waitJS(focused+` === 'pane-menu'`))
}

// settingsTabs are the Settings sections, as their tab buttons' test ids name them.
var settingsTabs = []string{"providers", "prices", "terminal", "ssh", "logins", "personas", "skills", "templates", "plugins", "mcp"}

// settingsFit measures the open Settings dialog: whether its tab row and close button lie inside
// its box, and every tab label whose text is cut or that something else covers.
const settingsFit = `(() => {
  const dlg = document.querySelector('[data-testid=settings]');
  if (!dlg) return JSON.stringify({problems: ['the Settings dialog is not open']});
  const box = dlg.getBoundingClientRect();
  const problems = [];
  const inside = (el, what) => {
    const r = el.getBoundingClientRect();
    if (r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5)
      problems.push(what + ' at ' + [r.left, r.top, r.right, r.bottom].map(Math.round).join(',') +
        ' is not inside the dialog at ' + [box.left, box.top, box.right, box.bottom].map(Math.round).join(','));
    if (r.right > innerWidth + 0.5 || r.bottom > innerHeight + 0.5) problems.push(what + ' is outside the window');
    return r;
  };
  inside(dlg.querySelector('[role=tablist]'), 'the tab row');
  const close = dlg.querySelector('[data-testid=settings-close]');
  const cr = inside(close, 'the close button');
  const hit = document.elementFromPoint(cr.left + cr.width / 2, cr.top + cr.height / 2);
  if (!close.contains(hit)) problems.push('the close button is covered by ' + (hit?.outerHTML ?? 'nothing').slice(0, 80));
  for (const tab of dlg.querySelectorAll('[role=tab]')) {
    const label = tab.textContent.trim();
    const r = inside(tab, 'tab "' + label + '"');
    if (tab.scrollWidth > tab.clientWidth) problems.push('tab "' + label + '" is cut: ' + tab.scrollWidth + ' px of text in ' + tab.clientWidth + ' px');
    const h = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    if (!tab.contains(h)) problems.push('tab "' + label + '" is hidden under ' + (h?.outerHTML ?? 'nothing').slice(0, 80));
  }
  return JSON.stringify({problems});
})()`

// checkSettingsFit fails the test with every part of the Settings header that does not fit.
func checkSettingsFit(t *testing.T, ctx context.Context, size string) {
	t.Helper()
	var raw string
	step(t, ctx, "measure Settings at "+size, chromedp.Evaluate(settingsFit, &raw))
	var got struct{ Problems []string }
	if err := json.Unmarshal([]byte(raw), &got); err != nil {
		t.Fatalf("measure Settings: %q: %v", raw, err)
	}
	if len(got.Problems) > 0 {
		shot(t, ctx, "settings-fit-"+size)
		t.Errorf("at %s the Settings header does not fit its dialog:\n  %s", size, strings.Join(got.Problems, "\n  "))
	}
}

// focusInSettings is true while the keyboard focus is inside the Settings dialog, so Esc and
// Tab reach it.
const focusInSettings = `document.querySelector('[data-testid=settings]')?.contains(document.activeElement) === true`

// A new user's walk through Settings in the served UI: the dialog holds its ten tabs and its
// close button at a laptop's window and a narrow one; after saving a form the focus is still in
// the dialog, so Esc closes it and the focus goes back to the gear that opened it; "Test
// connection" on an empty provider form says which field to fill; and no tab, list or form has a
// serious accessibility problem.
func TestWalkthroughSettings(t *testing.T) {
	_, ctx := openApp(t)

	for _, sz := range []struct{ w, h int64 }{{1280, 800}, {900, 700}, {800, 600}} {
		size := fmt.Sprintf("%dx%d", sz.w, sz.h)
		step(t, ctx, "open Settings at "+size,
			chromedp.EmulateViewport(sz.w, sz.h),
			chromedp.Click(`[data-testid=settings-open]`),
			chromedp.WaitVisible(`[data-testid=settings]`),
			chromedp.WaitVisible(`[data-testid=providers-tab]`))
		checkSettingsFit(t, ctx, size)
		shot(t, ctx, "settings-"+size)
		step(t, ctx, "close Settings at "+size,
			chromedp.KeyEvent(kb.Escape),
			waitJS(`!document.querySelector('[data-testid=settings]')`))
	}
	step(t, ctx, "back to 1280x800", chromedp.EmulateViewport(1280, 800))

	// The empty add form's test names the key field and what to type, not an internal id.
	step(t, ctx, "Test connection on an empty provider form",
		chromedp.Click(`[data-testid=settings-open]`),
		chromedp.WaitVisible(`[data-testid=providers-tab]`),
		chromedp.Click(`[data-testid=provider-add]`),
		chromedp.WaitVisible(`[data-testid=provider-form]`),
		chromedp.Click(`[data-testid=provider-form-test]`),
		waitJS(`!!document.querySelector('[data-testid=field-error][data-field=apiKey]') || !!document.querySelector('[data-testid=provider-form-test-result]')`))
	var formText string
	step(t, ctx, "read the provider form", chromedp.Evaluate(`document.querySelector('[data-testid=provider-form]').innerText`, &formText))
	if !strings.Contains(formText, "API key: enter the OpenAI key to test this provider") || strings.Contains(formText, "unsaved") {
		shot(t, ctx, "settings-empty-test")
		t.Errorf("Test connection on an empty form should say %q under the API key, without the internal name \"unsaved\"; the form reads:\n%s",
			"API key: enter the OpenAI key to test this provider", formText)
	}
	shot(t, ctx, "settings-provider-form-empty-test")
	axeCheck(t, ctx, "Settings → Providers, the add form", `[data-testid=settings]`)

	// Save a provider: the form goes, the focus stays in the dialog.
	step(t, ctx, "save a provider",
		chromedp.SendKeys(`[data-testid=provider-name]`, "Local"),
		chromedp.SendKeys(`[data-testid=provider-base-url]`, "http://127.0.0.1:9/v1"),
		chromedp.SendKeys(`[data-testid=provider-model]`, "small"),
		chromedp.Click(`[data-testid=provider-save]`),
		chromedp.WaitVisible(rowSel("Local")))
	step(t, ctx, "after Save the focus is in Settings", waitJS(focusInSettings))
	axeCheck(t, ctx, "Settings → Providers, the list", `[data-testid=settings]`)
	step(t, ctx, "Esc closes Settings and the focus goes back to the gear",
		chromedp.KeyEvent(kb.Escape),
		waitJS(`!document.querySelector('[data-testid=settings]')`),
		waitJS(`document.activeElement === document.querySelector('[data-testid=settings-open]')`))

	// The SSH and Logins forms: after Save and after Cancel the focus is still in the dialog.
	step(t, ctx, "open Settings → SSH servers, add one",
		chromedp.Click(`[data-testid=settings-open]`),
		chromedp.Click(`[data-testid=settings-tab-ssh]`),
		chromedp.Click(`[data-testid=ssh-add]`),
		chromedp.WaitVisible(`[data-testid=ssh-form]`))
	axeCheck(t, ctx, "Settings → SSH servers, the add form", `[data-testid=settings]`)
	step(t, ctx, "save the SSH server",
		chromedp.SendKeys(`[data-testid=ssh-name]`, "Build box"),
		chromedp.SendKeys(`[data-testid=ssh-host]`, "build.invalid"),
		chromedp.Click(`[data-testid=ssh-save]`),
		chromedp.WaitVisible(`[data-testid=ssh-row][data-name="Build box"]`),
		waitJS(focusInSettings))
	shot(t, ctx, "settings-ssh-list")
	step(t, ctx, "open and cancel the Logins form",
		chromedp.Click(`[data-testid=settings-tab-logins]`),
		chromedp.Click(`[data-testid=login-add]`),
		chromedp.WaitVisible(`[data-testid=login-form]`))
	axeCheck(t, ctx, "Settings → Logins, the add form", `[data-testid=settings]`)
	step(t, ctx, "save a login",
		chromedp.SendKeys(`[data-testid=login-origin]`, "https://staging.example.com"),
		chromedp.SendKeys(`[data-testid=login-username]`, "me"),
		chromedp.SendKeys(`[data-testid=settings] [data-testid=login-password]`, "pw-123456"),
		chromedp.Click(`[data-testid=login-save]`),
		chromedp.WaitVisible(`[data-testid=login-row]`),
		waitJS(focusInSettings))

	// Delete asks first: Esc answers the question, not Settings; after the delete the focus is
	// still in Settings.
	step(t, ctx, "Esc on the delete question keeps Settings open",
		chromedp.Click(`[data-testid=settings-tab-ssh]`),
		chromedp.Click(`[data-testid=ssh-row][data-name="Build box"] [data-testid=ssh-delete]`),
		chromedp.WaitVisible(`[data-testid=confirm-dialog]`),
		chromedp.KeyEvent(kb.Escape),
		waitJS(`!document.querySelector('[data-testid=confirm-dialog]') && !!document.querySelector('[data-testid=settings]')`),
		waitJS(focusInSettings))
	step(t, ctx, "delete the SSH server",
		chromedp.Click(`[data-testid=ssh-row][data-name="Build box"] [data-testid=ssh-delete]`),
		chromedp.Click(`[data-testid=confirm-ok]`),
		chromedp.WaitVisible(`[data-testid=ssh-empty]`),
		waitJS(focusInSettings))

	// Every tab, with what it lists, has no serious or critical accessibility violation, in the
	// light palette and the dark one.
	for _, scheme := range []string{"light", "dark"} {
		step(t, ctx, "the system asks for "+scheme,
			systemScheme(scheme),
			waitJS(fmt.Sprintf(`document.documentElement.dataset.theme === %q`, scheme)))
		for _, tab := range settingsTabs {
			step(t, ctx, "open the tab "+tab,
				chromedp.Click(fmt.Sprintf(`[data-testid=settings-tab-%s]`, tab)),
				waitJS(fmt.Sprintf(`document.querySelector('[data-testid=settings-tab-%s]').getAttribute('aria-selected') === 'true'`, tab)),
				// Loaded: no spinner left in the section.
				waitJS(`!!document.querySelector('#settings-body') && !document.querySelector('#settings-body .spinner')`),
				chromedp.Sleep(200*time.Millisecond))
			axeCheck(t, ctx, fmt.Sprintf("Settings → %s (%s)", tab, scheme), `[data-testid=settings]`)
			step(t, ctx, "the focus is in Settings on the tab "+tab, waitJS(focusInSettings))
		}
	}
	step(t, ctx, "Esc from a tab closes Settings",
		chromedp.KeyEvent(kb.Escape),
		waitJS(`!document.querySelector('[data-testid=settings]')`))
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	kb "github.com/chromedp/chromedp/kb"

	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

// The steps most end-to-end tests begin with, in one place: serving a fresh data dir, logging
// in with a real browser, reaching a screen through the command palette.

// openApp serves a fresh data dir, opens headless Chromium and logs in: the app as a person
// first sees it.
func openApp(t *testing.T) (*serveProcess, context.Context) {
	t.Helper()
	return openAppWithModel(t, nil)
}

// openAppWithModel is openApp with the scripted model as the default provider (nil: none),
// added before the page loads so the UI starts with it.
func openAppWithModel(t *testing.T, model *llmtest.Server) (*serveProcess, context.Context) {
	t.Helper()
	srv := startServe(t, t.TempDir(), e2ePassword)
	if model != nil {
		addScriptedProvider(t, srv, model)
	}
	ctx := newBrowser(t)
	logIn(t, ctx, srv.URL, e2ePassword)
	return srv, ctx
}

// paletteCommand runs a command by keyboard only: Ctrl+Shift+P, the query typed, and Enter once
// the highlighted item (the one Enter runs) is the one whose text contains item.
func paletteCommand(query, item string) chromedp.Action {
	return chromedp.Tasks{
		chromedp.KeyEvent("p", chromedp.KeyModifiers(input.ModifierCtrl|input.ModifierShift)),
		chromedp.WaitVisible(`[data-testid=palette-input]`),
		chromedp.SendKeys(`[data-testid=palette-input]`, query),
		waitJS(fmt.Sprintf(`document.querySelector('[data-testid=palette-item][data-selected=true]')?.textContent.includes(%q)`, item)),
		chromedp.KeyEvent(kb.Enter),
	}
}

// openFleetDashboard opens the Fleet Dashboard from the palette, then runs the test's own
// waits for what it should show.
func openFleetDashboard(t *testing.T, ctx context.Context, then ...chromedp.Action) {
	t.Helper()
	step(t, ctx, "open the Fleet Dashboard from the palette",
		append([]chromedp.Action{paletteCommand("Fleet Dashboard", "Toggle Fleet Dashboard")}, then...)...)
}

// postFleet starts a fleet from its YAML over the REST API and returns its id.
func postFleet(t *testing.T, srv *serveProcess, token, yaml string) string {
	t.Helper()
	var f struct{ ID string }
	apiCall(t, "POST", srv.URL+"/api/fleets", token, map[string]any{"yaml": yaml}, &f)
	if f.ID == "" {
		t.Fatalf("POST /api/fleets answered no fleet id for:\n%s", yaml)
	}
	return f.ID
}

// wantOutput fails the test for each of wants that a command's output lacks.
func wantOutput(t *testing.T, out string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// openChat serves a fresh data dir and, in a real browser, logs in, adds the scripted model as
// a provider through Settings and opens the chat panel (setUpChat).
func openChat(t *testing.T, model *llmtest.Server) (*serveProcess, context.Context) {
	t.Helper()
	srv := startServe(t, t.TempDir(), e2ePassword)
	ctx := newBrowser(t)
	setUpChat(t, ctx, srv.URL, model)
	return srv, ctx
}

// lastJSONField is the last non-empty value of a string field among the JSON lines a
// command printed with --json (a fleet's or goal's id), "" when none has it.
func lastJSONField(out, field string) string {
	v := ""
	for _, line := range strings.Split(out, "\n") {
		var e map[string]any
		if json.Unmarshal([]byte(line), &e) == nil {
			if s, _ := e[field].(string); s != "" {
				v = s
			}
		}
	}
	return v
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

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
		ctrlShift("p"),
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

// openAppOnFleet is openAppWithModel with the fleet of yaml started over the REST API: the
// app, the login token of its API and the fleet's id.
func openAppOnFleet(t *testing.T, model *llmtest.Server, yaml string) (srv *serveProcess, ctx context.Context, token, fleetID string) {
	t.Helper()
	srv, ctx = openAppWithModel(t, model)
	token = apiToken(t, srv.URL)
	var f struct{ ID string }
	apiCall(t, "POST", srv.URL+"/api/fleets", token, map[string]any{"yaml": yaml}, &f)
	if f.ID == "" {
		t.Fatalf("POST /api/fleets answered no fleet id for:\n%s", yaml)
	}
	return srv, ctx, token, f.ID
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

// localPort is the port of a local test server's URL, what --allow-local-port and a policy's
// localPorts name to open it to a sandboxed goal.
func localPort(t *testing.T, rawURL string) int {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	addr, err := net.ResolveTCPAddr("tcp", u.Host) // an IP address and a port: nothing to look up
	if err != nil {
		t.Fatalf("%s names no address and port: %v", rawURL, err)
	}
	return addr.Port
}

// apiCall sends one JSON request to a running `serve` with a bearer token (none for login).
func apiCall(t *testing.T, method, url, token string, body, out any) {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(method, url, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer res.Body.Close()
	if res.StatusCode >= 300 {
		var e struct{ Error string }
		json.NewDecoder(res.Body).Decode(&e)
		t.Fatalf("%s %s: %s %s", method, url, res.Status, e.Error)
	}
	if out != nil {
		if err := json.NewDecoder(res.Body).Decode(out); err != nil {
			t.Fatalf("%s %s: decode: %v", method, url, err)
		}
	}
}

// addScriptedProvider makes the scripted model server the served app's default provider (and
// so its critic default too), through the HTTP API the Settings panel uses.
func addScriptedProvider(t *testing.T, srv *serveProcess, model *llmtest.Server) {
	t.Helper()
	apiCall(t, "POST", srv.URL+"/api/providers", apiToken(t, srv.URL),
		map[string]any{"name": "Scripted", "kind": "openai", "baseUrl": model.OpenAIURL(), "model": "scripted-model"}, nil)
}

// makeBrowserPane signs in to a running `serve` and turns the first workspace's second pane
// into a browser pane, through the HTTP API; it returns the token and the pane's id.
func makeBrowserPane(t *testing.T, srv *serveProcess) (token, paneID string) {
	t.Helper()
	token = apiToken(t, srv.URL)
	first := firstWorkspace(t, srv, token)
	ws, pane := first.ID, first.Panes[1].ID
	apiCall(t, "PATCH", fmt.Sprintf("%s/api/workspaces/%s/panes/%s", srv.URL, ws, pane), token, map[string]string{"kind": "browser"}, nil)
	return token, pane
}

// pickOption chooses the option with the given value in a <select> with arrow keys (from the
// first option), as a keyboard user does.
func pickOption(sel, value string) chromedp.Action {
	return chromedp.ActionFunc(func(ctx context.Context) error {
		var idx int
		if err := chromedp.Evaluate(fmt.Sprintf(`[...document.querySelector(%q).options].findIndex(o => o.value === %q)`, sel, value), &idx).Do(ctx); err != nil {
			return err
		}
		if idx < 0 {
			return fmt.Errorf("%s has no option %q", sel, value)
		}
		if err := chromedp.SendKeys(sel, strings.Repeat(kb.ArrowUp, 40)+strings.Repeat(kb.ArrowDown, idx)).Do(ctx); err != nil {
			return err
		}
		return chromedp.Poll(fmt.Sprintf(`document.querySelector(%q).value === %q`, sel, value), nil, chromedp.WithPollingTimeout(5*time.Second)).Do(ctx)
	})
}

// logIn opens the app and logs in with the given password.
func logIn(t testing.TB, ctx context.Context, url, password string) {
	t.Helper()
	step(t, ctx, "log in",
		chromedp.Navigate(url),
		chromedp.WaitVisible(`[data-testid=login-password]`),
		chromedp.SendKeys(`[data-testid=login-password]`, password),
		chromedp.Click(`[data-testid=login-submit]`),
		chromedp.WaitVisible(`[data-testid=app-ready]`))
}

func apiToken(t *testing.T, url string) string {
	var tokens struct{ AccessToken string }
	apiCall(t, "POST", url+"/api/login", "", map[string]string{"password": e2ePassword}, &tokens)
	return tokens.AccessToken
}

// listedWorkspace is a workspace as GET /api/workspaces lists it: its id and its panes' ids.
type listedWorkspace struct {
	ID    string
	Panes []struct{ ID string }
}

// firstWorkspace is the first workspace GET /api/workspaces lists.
func firstWorkspace(t *testing.T, srv *serveProcess, token string) listedWorkspace {
	t.Helper()
	var list struct{ Workspaces []listedWorkspace }
	apiCall(t, "GET", srv.URL+"/api/workspaces", token, nil, &list)
	if len(list.Workspaces) == 0 {
		t.Fatal("GET /api/workspaces lists no workspace")
	}
	return list.Workspaces[0]
}

// waitUntilAborted is an agent's turn for a goal that works until it is aborted: a short wait,
// a little different each time (n counts the turns) so the loop guard sees no repetition.
func waitUntilAborted(n *atomic.Int64) llmtest.Reply {
	return toolCall("wait", map[string]int{"ms": 200 + int(n.Add(1)%300)})
}

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

func paneSel(id string) string { return fmt.Sprintf(`[data-testid=pane][data-pane-id=%q]`, id) }

// keys presses modifier+key as one chord, as a keyboard does.
func keys(key string, mods input.Modifier) chromedp.Action {
	return chromedp.KeyEvent(key, chromedp.KeyModifiers(mods))
}

// ctrlShift presses Ctrl+Shift+key, the chord of the app's own shortcuts.
func ctrlShift(key string) chromedp.Action { return keys(key, input.ModifierCtrl|input.ModifierShift) }

// axe-core (an npm devDependency of the frontend, installed by `npm ci`) checks a screen for
// what keeps people from reading or working it: contrast, names of controls, focus order,
// dialogs without a label. axeCheck injects it into the page the browser shows and fails the
// test on every serious or critical violation, naming the rule, the element and how to fix it.

var (
	axeOnce   sync.Once
	axeSource string
	axeErr    error
)

func axeScript(t testing.TB) string {
	t.Helper()
	axeOnce.Do(func() {
		b, err := os.ReadFile(filepath.Join("frontend", "node_modules", "axe-core", "axe.min.js"))
		if err != nil {
			axeErr = fmt.Errorf("axe-core is not installed: run scripts/setup.sh (npm ci in frontend): %w", err)
			return
		}
		axeSource = string(b)
	})
	if axeErr != nil {
		t.Fatal(axeErr)
	}
	return axeSource
}

// axeViolation is what axe reports of one rule, cut to what a person needs to fix it.
type axeViolation struct {
	ID      string `json:"id"`
	Impact  string `json:"impact"`
	Help    string `json:"help"`
	Targets []struct {
		Target  []string `json:"target"`
		Summary string   `json:"failureSummary"`
	} `json:"nodes"`
}

// axeViolations runs axe on the document (or the elements a CSS selector picks) and returns
// the serious and critical violations of WCAG 2 A and AA.
func axeViolations(t testing.TB, ctx context.Context, within string) []axeViolation {
	t.Helper()
	inject := `if (!window.axe) { ` + axeScript(t) + ` } true`
	ctxSel := "document"
	if within != "" {
		ctxSel = fmt.Sprintf("document.querySelector(%q)", within)
	}
	run := fmt.Sprintf(`axe.run(%s, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']}, resultTypes: ['violations']})
  .then(r => JSON.stringify(r.violations.filter(v => v.impact === 'serious' || v.impact === 'critical')
    .map(v => ({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 5).map(n => ({target: n.target, failureSummary: n.failureSummary}))}))))`, ctxSel)
	var ok bool
	var raw string
	actx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Run(actx,
		chromedp.Evaluate(inject, &ok),
		chromedp.Evaluate(run, &raw, func(p *cdpruntime.EvaluateParams) *cdpruntime.EvaluateParams { return p.WithAwaitPromise(true) }),
	); err != nil {
		t.Fatalf("run axe-core: %v", err)
	}
	var vs []axeViolation
	if err := json.Unmarshal([]byte(raw), &vs); err != nil {
		t.Fatalf("axe-core's answer %q: %v", raw, err)
	}
	return vs
}

// axeCheck fails the test with every serious or critical accessibility violation on the
// screen named by screen (for the message); within limits the check to part of the page.
func axeCheck(t testing.TB, ctx context.Context, screen, within string) {
	t.Helper()
	vs := axeViolations(t, ctx, within)
	if len(vs) == 0 {
		return
	}
	shot(t, ctx, "axe-"+sanitize(screen))
	var b strings.Builder
	for _, v := range vs {
		fmt.Fprintf(&b, "\n  %s (%s): %s", v.ID, v.Impact, v.Help)
		for _, n := range v.Targets {
			fmt.Fprintf(&b, "\n    at %s: %s", strings.Join(n.Target, " "), strings.ReplaceAll(n.Summary, "\n", " "))
		}
	}
	t.Errorf("screen %q has %d serious or critical accessibility violations:%s", screen, len(vs), b.String())
}

// writeFiles writes files (a path under dir, slash-separated: its content) into dir, making the
// folders they need.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// wantFiles fails the test, and goes on, for each file (a path under dir, slash-separated)
// that is not there: what an agent's shell was to write.
func wantFiles(t *testing.T, dir string, names ...string) {
	t.Helper()
	for _, name := range names {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(name))); err != nil {
			t.Errorf("%s is missing: %v", name, err)
		}
	}
}

// openDashboard presses Ctrl+Shift+D, as a person would, and waits for the dashboard.
// (Ctrl+Shift+G opens the New Goal dialog for the focused pane.)
func openDashboard(t *testing.T, ctx context.Context) {
	t.Helper()
	step(t, ctx, "open the goal dashboard with Ctrl+Shift+D",
		ctrlShift("d"),
		chromedp.WaitVisible(`[data-testid=goal-dashboard]`))
}

// jsString is s as a JavaScript string literal, for expressions that compare or search text.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// everyTurn is a scripted model that answers every request with reply's answer to it, for as
// long as the test runs.
func everyTurn(t *testing.T, reply func(llmtest.Request) llmtest.Reply) *llmtest.Server {
	return llmtest.New(t, llmtest.Script{Replies: []llmtest.Reply{{Repeat: 1 << 30, Compute: reply}}})
}

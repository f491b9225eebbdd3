package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/browser/browsertest"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
	"github.com/clusterspace/clusterspace/backend/panes"
	"github.com/clusterspace/clusterspace/backend/terminal"
	"github.com/clusterspace/clusterspace/backend/tools"
	"github.com/clusterspace/clusterspace/backend/workspace"
)

// toolRig is an engine on a fresh data dir whose first workspace (2 x 2 terminals) the tools
// act on, as a chat of that workspace would call them.
type toolRig struct {
	t   *testing.T
	eng *Engine
	ws  workspace.Workspace
}

func newToolRig(t *testing.T, dataDir string) *toolRig {
	t.Helper()
	eng := openEngine(t, dataDir)
	t.Cleanup(func() { eng.Close() })
	list, err := eng.Workspaces.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return &toolRig{t: t, eng: eng, ws: list.Workspaces[0]}
}

// call runs a registered tool as the workspace's chat (or, with own set, as a goal in that pane).
func (r *toolRig) call(own, name string, args any) tools.Result {
	r.t.Helper()
	tool, ok := r.eng.Registry.Get(name)
	if !ok {
		r.t.Fatalf("no tool %s", name)
	}
	raw, _ := json.Marshal(args)
	c := tools.Call{ID: "c1", Name: name, Args: raw, WorkspaceID: r.ws.ID, PaneID: own}
	if own != "" {
		c.WorkspaceID = ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := tool.Run(ctx, c)
	if err != nil {
		r.t.Fatalf("%s: %v", name, err)
	}
	return res
}

func (r *toolRig) mustOK(own, name string, args any) tools.Result {
	r.t.Helper()
	res := r.call(own, name, args)
	if res.IsError {
		r.t.Fatalf("%s %v: %s", name, args, res.Text)
	}
	return res
}

func (r *toolRig) mustRefuse(own, name string, args any, want string) {
	r.t.Helper()
	res := r.call(own, name, args)
	if !res.IsError || !strings.Contains(res.Text, want) {
		r.t.Fatalf("%s %v: want a refusal containing %q, got %+v", name, args, want, res)
	}
}

func (r *toolRig) current() workspace.Workspace {
	r.t.Helper()
	ws, err := r.eng.Workspaces.Get(context.Background(), r.ws.ID)
	if err != nil {
		r.t.Fatal(err)
	}
	return ws
}

func (r *toolRig) start(paneID string) terminal.TabInfo {
	r.t.Helper()
	ws := r.current()
	for _, p := range ws.Panes {
		if p.ID == paneID {
			tab, err := r.eng.Panes.StartTerminal(context.Background(), ws, p, 0, 0)
			if err != nil {
				r.t.Fatal(err)
			}
			return tab
		}
	}
	r.t.Fatalf("no pane %s", paneID)
	return terminal.TabInfo{}
}

// waitOutput waits until the pane's terminal shows want.
func (r *toolRig) waitOutput(paneID, want string) string {
	r.t.Helper()
	var text string
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		text, _ = r.eng.Terminals.Tail(paneID, "", 40)
		if strings.Contains(text, want) {
			return text
		}
	}
	r.t.Fatalf("pane %s never showed %q:\n%s", paneID, want, text)
	return ""
}

func (r *toolRig) list(own string, args map[string]any) panes.Page {
	r.t.Helper()
	var page panes.Page
	if err := json.Unmarshal([]byte(r.mustOK(own, "list_panes", args).Text), &page); err != nil {
		r.t.Fatal(err)
	}
	return page
}

func alive(pid int) bool { return pid > 0 && syscall.Kill(pid, 0) == nil }

func TestWorkspaceToolsOnRealTerminals(t *testing.T) {
	r := newToolRig(t, t.TempDir())
	a, b, c, d := r.ws.Panes[0].ID, r.ws.Panes[1].ID, r.ws.Panes[2].ID, r.ws.Panes[3].ID
	tabA := r.start(a)
	r.start(b)
	cwd := t.TempDir()
	r.eng.Terminals.Write(a, "", []byte("cd "+cwd+" && echo moved-$((40+2))\r"))
	r.waitOutput(a, "moved-42")

	// list_panes: every pane in grid order, kinds, tabs, the caller's own pane marked.
	page := r.list(a, nil)
	if page.Total != 4 || len(page.Items) != 4 || page.HasMore || page.Workspace != r.ws.Name {
		t.Fatalf("list_panes: %+v", page)
	}
	first := page.Items[0]
	if first.PaneID != a || first.Kind != "terminal" || !first.Yours || len(first.Tabs) != 1 || first.Tabs[0].TabID != tabA.TabID ||
		!first.Tabs[0].Active || !first.Tabs[0].Connected || first.Cwd != cwd || first.Busy == nil || *first.Busy || first.IdleMS == nil {
		t.Errorf("the started, own pane: %+v", first)
	}
	if page.Items[2].Kind != "empty" || page.Items[2].Yours || page.Items[1].Row != 0 || page.Items[1].Col != 1 || page.Items[2].Row != 1 {
		t.Errorf("the other panes: %+v", page.Items)
	}
	// Pages of two, followed by cursor.
	p1 := r.list("", map[string]any{"limit": 2})
	p2 := r.list("", map[string]any{"limit": 2, "cursor": p1.NextCursor})
	if !p1.HasMore || len(p1.Items) != 2 || p2.HasMore || len(p2.Items) != 2 || p2.Items[1].PaneID != d || p1.Total != 4 {
		t.Errorf("paging: %+v / %+v", p1, p2)
	}
	r.mustRefuse("", "list_panes", map[string]any{"limit": 51}, "1-50")

	// Unknown ids: the message that says what to do, and nothing changes.
	before := r.current()
	notFound := fmt.Sprintf("Pane pane-nope not found in workspace %q — call list_panes for the current ids", r.ws.Name)
	for _, tool := range []string{"focus_pane", "maximize_pane", "convert_pane_to_browser", "convert_pane_to_terminal", "reconnect_pane", "capture_screenshot"} {
		r.mustRefuse("", tool, map[string]any{"pane_id": "pane-nope"}, notFound)
	}
	if after := r.current(); after.FocusedPaneID != before.FocusedPaneID || after.MaximizedPaneID != "" || len(r.eng.Terminals.Tabs("pane-nope")) != 0 {
		t.Errorf("a refused call changed the workspace: %+v", after)
	}

	// focus_pane and maximize_pane change the engine's workspace, as the window shows it.
	r.mustOK("", "focus_pane", map[string]any{"pane_id": b})
	if ws := r.current(); ws.FocusedPaneID != b {
		t.Errorf("focus: %q", ws.FocusedPaneID)
	}
	r.mustOK("", "maximize_pane", map[string]any{"pane_id": a})
	if ws := r.current(); ws.MaximizedPaneID != a || ws.FocusedPaneID != a {
		t.Errorf("maximize: %+v", ws)
	}
	if it := r.list("", nil).Items[0]; !it.Maximized || !it.Focused {
		t.Errorf("list after maximize: %+v", it)
	}
	r.mustOK("", "maximize_pane", map[string]any{"pane_id": a})
	if ws := r.current(); ws.MaximizedPaneID != "" {
		t.Errorf("maximize again should restore: %+v", ws)
	}

	// capture_screenshot of a terminal: its screen as text with the cursor.
	res := r.mustOK(a, "capture_screenshot", map[string]any{})
	if !strings.Contains(res.Text, "moved-42") || !strings.Contains(res.Text, "cursor at row") {
		t.Errorf("terminal capture: %s", res.Text)
	}
	// The screen drawn as a picture too: a PNG of the pane's size, not all background.
	if len(res.Images) != 1 {
		t.Fatalf("terminal capture has %d pictures", len(res.Images))
	}
	if shot, err := png.Decode(bytes.NewReader(res.Images[0].Data)); err != nil || shot.Bounds().Dx() < 80*7 || !hasInk(shot) {
		t.Errorf("terminal capture picture: %v (%v)", err, shot.Bounds())
	}

	// switch_terminal_tab: a second tab becomes the active one; tab_id on terminal tools.
	tab2, err := r.eng.Terminals.Open(context.Background(), terminal.Spec{PaneID: a})
	if err != nil {
		t.Fatal(err)
	}
	r.mustOK("", "switch_terminal_tab", map[string]any{"pane_id": a, "tab_id": tabA.TabID})
	r.mustOK("", "write_to_terminal", map[string]any{"pane_id": a, "tab_id": tab2.TabID, "text": "echo in-tab-$((2+3))"})
	if text, _ := r.eng.Terminals.Tail(a, tab2.TabID, 10); !strings.Contains(text, "in-tab-5") {
		t.Errorf("write_to_terminal with tab_id: %s", text)
	}
	if res := r.mustOK("", "poll_terminal_status", map[string]any{"pane_id": a, "tab_id": tab2.TabID}); !strings.Contains(res.Text, "in-tab-5") {
		t.Errorf("poll_terminal_status with tab_id: %s", res.Text)
	}
	r.mustOK("", "switch_terminal_tab", map[string]any{"pane_id": a, "tab_id": tab2.TabID})
	if st, _ := r.eng.Terminals.Status(a, ""); st.Tab.TabID != tab2.TabID {
		t.Errorf("active tab after switch: %s", st.Tab.TabID)
	}
	r.mustRefuse("", "switch_terminal_tab", map[string]any{"pane_id": a, "tab_id": "tab-nope"}, "list_panes")

	// reconnect_pane: a fresh process in the tab.
	old := tab2.PID
	r.mustOK("", "reconnect_pane", map[string]any{"pane_id": a, "tab_id": tab2.TabID})
	var now int
	for _, tb := range r.eng.Terminals.Tabs(a) {
		if tb.TabID == tab2.TabID {
			now = tb.PID
		}
	}
	if now == old || now == 0 {
		t.Errorf("reconnect kept pid %d (now %d)", old, now)
	}

	// convert: a busy pane is refused without force, naming what runs; the caller's own
	// pane never; with force the command and its shell end.
	r.eng.Terminals.Write(b, "", []byte("sleep 300\r"))
	// Not just any foreground process: between fork and exec the child is still "bash".
	waitFor(t, "sleep to run", func() bool { st, _ := r.eng.Terminals.Status(b, ""); return strings.Contains(st.Foreground, "sleep") })
	shellB := r.eng.Terminals.Tabs(b)[0].PID
	r.mustRefuse("", "convert_pane_to_browser", map[string]any{"pane_id": b}, "sleep")
	if ws := r.current(); ws.Panes[1].Kind != workspace.KindTerminal || !alive(shellB) {
		t.Fatalf("a refused conversion changed the pane")
	}
	r.mustRefuse(a, "convert_pane_to_browser", map[string]any{"pane_id": a, "force": true}, "your own pane")
	r.mustOK("", "convert_pane_to_browser", map[string]any{"pane_id": b, "force": true})
	if ws := r.current(); ws.Panes[1].Kind != workspace.KindBrowser {
		t.Errorf("pane b after converting: %+v", ws.Panes[1])
	}
	waitFor(t, "pane b's shell to end", func() bool { return !alive(shellB) && len(r.eng.Terminals.Tabs(b)) == 0 })
	if len(r.eng.Browsers.Tabs(b)) != 1 {
		t.Errorf("the converted pane has no browser tab: %+v", r.eng.Browsers.Tabs(b))
	}

	// create_workspace: bounds named, then a real one the window shows.
	r.mustRefuse("", "create_workspace", map[string]any{"name": "Big", "rows": 7, "cols": 2}, "rows")
	r.mustRefuse("", "create_workspace", map[string]any{"name": "Big", "rows": 2, "cols": 0}, "cols")
	res = r.mustOK("", "create_workspace", map[string]any{"name": "Agents", "rows": 2, "cols": 3})
	list, _ := r.eng.Workspaces.List(context.Background())
	if len(list.Workspaces) != 2 || list.Workspaces[1].Name != "Agents" || len(list.Workspaces[1].Panes) != 6 || list.ActiveID != list.Workspaces[1].ID ||
		!strings.Contains(res.Text, list.Workspaces[1].Panes[5].ID) {
		t.Errorf("create_workspace: %s\n%+v", res.Text, list)
	}
	_ = c
}

func TestWorkspaceToolsOnRealBrowsers(t *testing.T) {
	site := browsertest.NewSite(t)
	r := newToolRig(t, t.TempDir())
	a, d := r.ws.Panes[0].ID, r.ws.Panes[3].ID
	r.start(a)
	r.mustOK("", "convert_pane_to_browser", map[string]any{"pane_id": d, "url": site.Page("/")})
	waitFor(t, "the page to load", func() bool {
		tabs := r.eng.Browsers.Tabs(d)
		return len(tabs) == 1 && tabs[0].Title == "Home" && !tabs[0].Loading
	})
	it := r.list(a, nil).Items[3]
	if it.Kind != "browser" || it.URL != site.Page("/") || it.PageTitle != "Home" || it.Title != "Home" || len(it.Tabs) != 1 || !it.Tabs[0].Connected {
		t.Errorf("browser pane in list_panes: %+v", it)
	}
	// Tabs: open, switch, close; never the last one.
	first := r.eng.Browsers.Tabs(d)[0].TabID
	r.mustOK("", "open_browser_tab", map[string]any{"pane_id": d, "url": site.Page("/form")})
	tabs := r.eng.Browsers.Tabs(d)
	if len(tabs) != 2 || !tabs[1].Active {
		t.Fatalf("after open_browser_tab: %+v", tabs)
	}
	r.mustOK("", "switch_browser_tab", map[string]any{"pane_id": d, "tab_id": first})
	if tabs := r.eng.Browsers.Tabs(d); !tabs[0].Active {
		t.Errorf("switch_browser_tab: %+v", tabs)
	}
	r.mustOK("", "close_browser_tab", map[string]any{"pane_id": d, "tab_id": tabs[1].TabID})
	r.mustRefuse("", "close_browser_tab", map[string]any{"pane_id": d, "tab_id": first}, "last tab")
	r.mustRefuse("", "close_browser_tab", map[string]any{"pane_id": d, "tab_id": "nope"}, "list_panes")
	// A browser tool on a terminal pane, and a terminal's tab tool on a browser pane.
	r.mustRefuse("", "open_browser_tab", map[string]any{"pane_id": a}, "is a terminal pane")
	r.mustRefuse("", "switch_terminal_tab", map[string]any{"pane_id": d, "tab_id": first}, "is a browser pane")
	// open_browser_tab without a URL loads nothing from the network.
	tool, _ := r.eng.Registry.Get("open_browser_tab")
	if risk, _ := tools.RiskOf(tool, json.RawMessage(`{"pane_id":"x"}`)); risk != tools.WriteLocal {
		t.Errorf("open_browser_tab without url: risk %s", risk)
	}
	// capture_screenshot of a browser pane: a PNG of its page.
	shot := r.mustOK("", "capture_screenshot", map[string]any{"pane_id": d})
	if len(shot.Images) != 1 || string(shot.Images[0].Data[1:4]) != "PNG" {
		t.Errorf("browser capture: %+v", shot.Text)
	}
	// reconnect_pane: a new page at the last URL.
	r.mustOK("", "reconnect_pane", map[string]any{"pane_id": d})
	waitFor(t, "the reconnected page", func() bool { tabs := r.eng.Browsers.Tabs(d); return len(tabs) == 1 && tabs[0].Title == "Home" })
	// Back to a terminal, from a template.
	r.mustOK("", "convert_pane_to_terminal", map[string]any{"pane_id": d, "template": "python"})
	if len(r.eng.Browsers.Tabs(d)) != 0 {
		t.Errorf("the browser tabs outlived the conversion")
	}
	r.waitOutput(d, ">>>") // the screen holds no trailing blanks
	if ws := r.current(); ws.Panes[3].Kind != workspace.KindTerminal || ws.Panes[3].Launch == nil || ws.Panes[3].Launch.Command != "python3" {
		t.Errorf("pane d after converting to Python: %+v", ws.Panes[3])
	}
}

// A pane launched from settings runs its command in its directory with its environment, and
// comes back the same after the app restarts. A template whose command is missing says so in
// the pane, and how to install it, over a live shell.
func TestPaneLaunchSettingsSurviveARestart(t *testing.T) {
	dataDir := t.TempDir()
	work := t.TempDir()
	script := filepath.Join(work, "tool.sh")
	os.WriteFile(script, []byte("#!/bin/sh\necho \"launched in $(pwd) with LAUNCH_VAR=$LAUNCH_VAR args=$*\"\nexec sh\n"), 0o755)
	launch := &workspace.Launch{Command: script, Args: []string{"one", "two"}, Dir: work, Env: []string{"LAUNCH_VAR=set-by-launch"}}
	want := fmt.Sprintf("launched in %s with LAUNCH_VAR=set-by-launch args=one two", work)

	r := newToolRig(t, dataDir)
	pane := r.ws.Panes[0].ID
	if _, err := r.eng.Panes.SetLaunch(context.Background(), r.ws.ID, pane, launch, false); err != nil {
		t.Fatal(err)
	}
	r.waitOutput(pane, want)
	missing := r.ws.Panes[1].ID
	if _, err := r.eng.Panes.SetLaunch(context.Background(), r.ws.ID, missing, &workspace.Launch{Template: "custom", Command: "no-such-agent-cli"}, false); err != nil {
		t.Fatal(err)
	}
	r.waitOutput(missing, "no-such-agent-cli is not installed")
	r.eng.Terminals.Write(missing, "", []byte("echo still-a-shell-$((3*3))\r"))
	r.waitOutput(missing, "still-a-shell-9")
	// Bad settings are refused by field, and change nothing.
	for field, l := range map[string]*workspace.Launch{
		"dir":      {Command: "sh", Dir: "relative/dir"},
		"env[0]":   {Command: "sh", Env: []string{"1BAD=x"}},
		"template": {Template: "emacs"},
		"command":  {Template: "custom"},
	} {
		_, err := r.eng.Panes.SetLaunch(context.Background(), r.ws.ID, pane, l, false)
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("launch %+v: %v, want an error naming %s", l, err, field)
		}
	}
	r.eng.Close()

	again := newToolRig(t, dataDir)
	ws := again.current()
	if got := ws.Panes[0].Launch; got == nil || got.Command != script || got.Dir != work || strings.Join(got.Args, " ") != "one two" {
		t.Fatalf("the launch settings after a restart: %+v", got)
	}
	again.start(pane)
	again.waitOutput(pane, want)
	if it := again.list("", nil).Items[0]; it.Launch != script+" one two" {
		t.Errorf("list_panes launch: %q", it.Launch)
	}
}

// A pane a goal works in cannot be converted or relaunched under it, by the agent of another
// caller or by the person; once the goal ends, it can.
func TestPaneAGoalWorksInIsNotConverted(t *testing.T) {
	srv := llmtest.New(t, llmtest.Script{})
	srv.Push(llmtest.Stalled("thinking", 1)) // the goal's model hangs mid-answer: the goal runs on
	cfg := srv.Config()
	eng := openEngine(t, t.TempDir(),
		WithModel(cfg))
	t.Cleanup(func() { eng.Close() })
	list, _ := eng.Workspaces.List(context.Background())
	r := &toolRig{t: t, eng: eng, ws: list.Workspaces[0]}
	pane := r.ws.Panes[1].ID
	g, err := eng.Goals.Start(context.Background(), testSpec(pane, "work", t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the goal to run", func() bool { _, ok := eng.Goals.WorkingIn(pane); return ok && len(srv.ChatRequests()) > 0 })
	r.mustRefuse("", "convert_pane_to_browser", map[string]any{"pane_id": pane, "force": true}, "goal "+g.ID+" works in pane")
	if _, err := eng.Panes.ConvertPane(context.Background(), r.ws.ID, pane, panes.ConvertRequest{Kind: workspace.KindBrowser, Force: true}); err == nil {
		t.Fatal("the person's conversion of a goal's pane went through")
	}
	if _, err := eng.Panes.SetLaunch(context.Background(), r.ws.ID, pane, &workspace.Launch{Template: "python"}, false); err == nil {
		t.Fatal("relaunching a goal's pane went through")
	}
	if ws := r.current(); ws.Panes[1].Kind != workspace.KindTerminal || ws.Panes[1].Launch != nil {
		t.Fatalf("a refused call changed the goal's pane: %+v", ws.Panes[1])
	}
	if err := eng.Goals.Abort(context.Background(), g.ID); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the goal to end", func() bool { _, ok := eng.Goals.WorkingIn(pane); return !ok })
	r.mustOK("", "convert_pane_to_browser", map[string]any{"pane_id": pane, "force": true})
}

// hasInk reports whether a picture has pixels brighter than a dark background: drawn text.
func hasInk(img image.Image) bool {
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if r, _, _, _ := img.At(x, y).RGBA(); r > 0xa000 {
				return true
			}
		}
	}
	return false
}

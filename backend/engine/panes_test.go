package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/config"
	"github.com/clusterspace/clusterspace/backend/fleet"
	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/goal/criterion"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
	"github.com/clusterspace/clusterspace/backend/terminal"
	"github.com/clusterspace/clusterspace/backend/tools"
	"github.com/clusterspace/clusterspace/backend/workspace"
)

// Shrinking a grid and deleting a workspace end what the removed panes held: every process
// of their shells' sessions (foreground programs, background jobs, nohup'd ones) and their
// Chromium targets, and the deleted workspace's Chromium. Busy panes (a program running, a
// goal working) are refused first, changing nothing, and ended only when forced.
func TestRemovingPanesEndsWhatTheyHold(t *testing.T) {
	ctx := context.Background()
	srv := llmtest.New(t, llmtest.Script{Replies: []llmtest.Reply{llmtest.Stalled("thinking", 2)}})
	cfg := srv.Config()
	eng := openEngine(t, t.TempDir(),
		WithModel(cfg))
	defer eng.Close()
	list, _ := eng.Workspaces.List(ctx)
	wsID := list.ActiveID
	ws, err := eng.Workspaces.SetGrid(ctx, wsID, 3, 3, false)
	if err != nil {
		t.Fatal(err)
	}

	// A shell in every cell; the kept cell (0,0) also gets a browser page, one removed cell too.
	shells := map[string]int{} // pane id -> its shell's pid (= its session id)
	var kept string
	var removed []string
	for _, p := range ws.Panes {
		info, err := eng.Terminals.Ensure(ctx, terminal.Spec{PaneID: p.ID, Shell: "/bin/bash", Dir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		shells[p.ID] = info.PID
		if p.Row == 0 && p.Col == 0 {
			kept = p.ID
		} else {
			removed = append(removed, p.ID)
		}
	}
	busyPane, jobsPane, goalPane := removed[0], removed[1], removed[2]
	waitPrompt(t, eng.Terminals, busyPane)
	waitPrompt(t, eng.Terminals, jobsPane)
	must(t, eng.Terminals.Write(busyPane, "", []byte("sleep 301\n")))
	must(t, eng.Terminals.Write(jobsPane, "", []byte("sleep 302 & nohup sleep 303 >/dev/null 2>&1 &\n")))
	waitFor(t, "sleep running in the busy pane", func() bool { return len(eng.Terminals.Busy(busyPane)) == 1 })
	waitFor(t, "both background jobs", func() bool { return len(sessionProcs(shells[jobsPane])) >= 3 })

	for _, id := range []string{kept, removed[3]} {
		if _, err := eng.Browsers.Open(ctx, id, wsID, "about:blank"); err != nil {
			t.Fatal(err)
		}
	}
	port := devtoolsPort(t, eng.Browsers.ProfileDir(wsID))
	if n := pageTargets(t, port); n != 3 { // the browser's own first tab and the two panes'
		t.Fatalf("%d page targets before the shrink, want 3", n)
	}

	g, err := eng.Goals.Start(ctx, goal.Spec{PaneID: goalPane, Goal: "work in the pane", Criterion: criterion.Spec{Kind: "manual"},
		Settings: goal.Settings{WorkDir: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the goal to ask the model", func() bool { return len(srv.ChatRequests()) >= 1 })

	before := 0
	for _, pid := range shells {
		before += len(sessionProcs(pid))
	}
	t.Logf("before the shrink: %d processes in 9 panes' sessions, 3 page targets", before)

	// Without force: refused, naming the busy panes, and nothing changes.
	_, err = eng.Workspaces.SetGrid(ctx, wsID, 1, 1, false)
	var be *workspace.BusyError
	if !errors.As(err, &be) || len(be.Panes) != 2 || !strings.Contains(err.Error(), "sleep running") ||
		!strings.Contains(err.Error(), `goal "work in the pane"`) {
		t.Fatalf("shrink over busy panes: %v", err)
	}
	if got, _ := eng.Workspaces.List(ctx); got.Workspaces[0].Rows != 3 {
		t.Fatalf("a refused shrink changed the grid to %d rows", got.Workspaces[0].Rows)
	}
	if n := len(sessionProcs(shells[busyPane])); n < 2 {
		t.Fatalf("a refused shrink ended the busy pane's processes (%d left)", n)
	}

	// Forced: everything the eight removed panes held is gone; the kept pane keeps its own.
	if _, err := eng.Workspaces.SetGrid(ctx, wsID, 1, 1, true); err != nil {
		t.Fatal(err)
	}
	for _, id := range removed {
		if procs := sessionProcs(shells[id]); len(procs) > 0 {
			t.Errorf("pane %s still has processes after the shrink: %v", id, procs)
		}
	}
	if procs := sessionProcs(shells[kept]); len(procs) != 1 {
		t.Errorf("the kept pane's shell: %v", procs)
	}
	if n := pageTargets(t, port); n != 2 {
		t.Errorf("%d page targets after the shrink, want 2 (the removed pane's page closed)", n)
	}
	if got, _ := eng.Goals.Get(ctx, g.ID); got.Status != goal.StatusAborted {
		t.Errorf("the goal in a removed pane is %s, want aborted", got.Status)
	}
	t.Logf("after the shrink: %d process in 1 pane's session, %d page targets", len(sessionProcs(shells[kept])), pageTargets(t, port))

	// Deleting the workspace (another one exists) ends the last shell and its Chromium.
	other, err := eng.Workspaces.Create(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	_ = other
	waitPrompt(t, eng.Terminals, kept)
	must(t, eng.Terminals.Write(kept, "", []byte("sleep 304\n")))
	waitFor(t, "sleep running in the kept pane", func() bool { return len(eng.Terminals.Busy(kept)) == 1 })
	if err := eng.Workspaces.Delete(ctx, wsID, false); !errors.As(err, &be) {
		t.Fatalf("deleting a workspace with a busy pane: %v", err)
	}
	must(t, eng.Workspaces.Delete(ctx, wsID, true))
	if procs := sessionProcs(shells[kept]); len(procs) > 0 {
		t.Errorf("the deleted workspace's shell still runs: %v", procs)
	}
	// The browser's helpers may take a moment to follow its main process out.
	waitFor(t, "the deleted workspace's Chromium processes to end", func() bool { return chromiumsFor(eng.Browsers.ProfileDir(wsID)) == 0 })
}

func waitPrompt(t *testing.T, m *terminal.Manager, pane string) {
	t.Helper()
	c, err := m.WaitForCompletion(context.Background(), pane, "", terminal.WaitOptions{Since: -1, Prompt: true, Timeout: 10 * time.Second})
	if err != nil || c.Reason != terminal.CompletedPrompt {
		t.Fatalf("no prompt in %s: %+v %v", pane, c, err)
	}
}

// proc is a live process as /proc shows it, read independently of the terminal package.
type proc struct {
	pid     int
	comm    string
	session int
	cmdline string
}

// liveProcs lists the machine's processes; zombies count as gone.
func liveProcs() []proc {
	entries, _ := os.ReadDir("/proc")
	var out []proc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		f := strings.Fields(s[i+1:]) // state ppid pgrp session …
		if len(f) < 4 || f[0] == "Z" {
			continue
		}
		session, _ := strconv.Atoi(f[3])
		// Best effort: a process that ended meanwhile has no command line, and names no profile.
		cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		out = append(out, proc{pid: pid, comm: s[strings.IndexByte(s, '(')+1 : i], session: session, cmdline: string(cmdline)})
	}
	return out
}

// sessionProcs lists the live processes of a shell's session, the shell included.
func sessionProcs(sid int) []string {
	var out []string
	for _, p := range liveProcs() {
		if p.session == sid {
			out = append(out, fmt.Sprintf("%d %s", p.pid, p.comm))
		}
	}
	return out
}

// devtoolsPort reads the port Chromium wrote into its profile for its DevTools endpoint.
func devtoolsPort(t *testing.T, profile string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(profile, "DevToolsActivePort"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.SplitN(string(b), "\n", 2)[0]
}

// pageTargets counts Chromium's page targets, asked over its own DevTools HTTP endpoint.
func pageTargets(t *testing.T, port string) int {
	t.Helper()
	resp, err := http.Get("http://127.0.0.1:" + port + "/json/list")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var targets []struct{ Type string }
	if err := json.NewDecoder(resp.Body).Decode(&targets); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, tg := range targets {
		if tg.Type == "page" {
			n++
		}
	}
	return n
}

// chromiumsFor counts live processes whose command line names the profile dir.
func chromiumsFor(profile string) int {
	n := 0
	for _, p := range liveProcs() {
		if strings.Contains(p.cmdline, "--user-data-dir="+profile) {
			n++
		}
	}
	return n
}

// A pane template in the config dir's templates/ joins the launch templates the pane menu
// lists, and a terminal pane started from it runs its command; the engine offers the skill
// tools. A template file added while the engine runs is usable at once.
func TestConfigDirPaneTemplatesAndSkillTools(t *testing.T) {
	ctx := context.Background()
	configDir, out := t.TempDir(), t.TempDir()
	eng := openEngine(t, t.TempDir(), WithConfigDir(configDir))
	defer eng.Close()
	if eng.Catalog == nil || eng.Catalog.Dir() != configDir {
		t.Fatalf("the engine's catalog should read %s", configDir)
	}
	for _, name := range []string{"list_skills", "load_skill"} {
		if _, ok := eng.Registry.Get(name); !ok {
			t.Errorf("the registry lacks %s", name)
		}
	}

	marker := markerTemplate(configDir, out)
	eng.Catalog.Reload() // the watcher would within a second; the test need not wait for it

	var listed bool
	for _, tp := range eng.Panes.Templates() {
		listed = listed || (tp.ID == "marker" && tp.Installed)
	}
	if !listed {
		t.Fatalf("the pane menu's templates lack the config dir's marker: %+v", eng.Panes.Templates())
	}
	list, _ := eng.Workspaces.List(ctx)
	ws := list.Workspaces[0]
	pane := ws.Panes[0].ID
	if _, err := eng.Panes.SetLaunch(ctx, ws.ID, pane, &workspace.Launch{Template: "marker"}, true); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(waitFile(t, marker)); got != "ran" {
		t.Fatalf("the marker template's command wrote %q, want \"ran\"", got)
	}
	if _, err := eng.Panes.SetLaunch(ctx, ws.ID, pane, &workspace.Launch{Template: "nope"}, true); err == nil || !strings.Contains(err.Error(), "marker") {
		t.Errorf("an unknown template should be refused naming the choices, the config dir's too: %v", err)
	}

	// The agent reaches it too: convert_pane_to_terminal takes the config dir's template.
	r := &toolRig{t: t, eng: eng, ws: ws}
	other := ws.Panes[1].ID
	browser := workspace.KindBrowser
	if _, err := eng.Workspaces.UpdatePane(ctx, ws.ID, other, workspace.PanePatch{Kind: &browser}); err != nil {
		t.Fatal(err)
	}
	if res := r.call("", "convert_pane_to_terminal", map[string]any{"pane_id": other, "template": "nope"}); !res.IsError || !strings.Contains(res.Text, "marker") {
		t.Errorf("an unknown template from the agent: %+v, want a refusal naming the choices", res)
	}
	os.Remove(marker)
	r.mustOK("", "convert_pane_to_terminal", map[string]any{"pane_id": other, "template": "marker"})
	if got := strings.TrimSpace(waitFile(t, marker)); got != "ran" {
		t.Fatalf("the converted pane's template command wrote %q, want \"ran\"", got)
	}
}

// waitFile waits (bounded) for path to hold something and returns it.
func waitFile(t *testing.T, path string) string {
	t.Helper()
	var b []byte
	waitFor(t, path+" to be written (the pane running its template)", func() bool {
		var err error
		b, err = os.ReadFile(path)
		return err == nil && strings.Contains(string(b), "\n")
	})
	return string(b)
}

// A goal's pane starts as its template through the goal, not only when a window opens it:
// unconfined it runs the template's command; confined, the same command runs inside the
// goal's sandbox, and an agent template's pane gets its private config dir in the goal's
// scratch dir, seeded with the key the person assigned to the template in Settings, which
// no variable of the pane holds.
func TestGoalPaneStartsAsItsTemplate(t *testing.T) {
	configDir := t.TempDir()
	os.MkdirAll(filepath.Join(configDir, "templates"), 0o755)
	// An agent template whose "tool" reports what it was given: its config dir, whether a
	// key variable reached it, and what its settings say.
	os.WriteFile(filepath.Join(configDir, "templates", "fakeagent.yaml"), []byte(`name: Fake agent
command: sh
args: [-c, 'printf "%s|%s|%s|%s\n" "$CLAUDE_CONFIG_DIR" "$ANTHROPIC_API_KEY$ANTHROPIC_AUTH_TOKEN" "$(cat "$CLAUDE_CONFIG_DIR/settings.json" | tr -d " \n")" "$(pwd)" > "$MARK"; exec sleep 60']
config_env: CLAUDE_CONFIG_DIR
wire: anthropic
hosts: [api.anthropic.com:443]
`), 0o644)
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "app-env-token") // the app's own: never a pane's
	r := newBoundaryRig(t, WithConfigDir(configDir))
	ctx := context.Background()
	key := "sk-ant-assigned-1234"
	p, err := r.eng.Providers.Save(ctx, "", config.ProviderInput{ProviderSettings: config.ProviderSettings{Name: "Mine", Kind: config.KindAnthropic, BaseURL: "http://127.0.0.1:4999", Model: "claude-x"}, APIKey: &key})
	if err != nil {
		t.Fatal(err)
	}
	wire := func(id string) (string, bool) {
		tm, ok := workspace.TemplateIn(r.eng.Workspaces.Templates(), id)
		return tm.Wire, ok
	}
	if err := config.SaveAgentKeys(ctx, r.eng.Store, r.eng.Providers, wire, config.AgentKeys{Providers: map[string]string{"fakeagent": p.ID}}); err != nil {
		t.Fatal(err)
	}
	if err := config.SaveAgentKeys(ctx, r.eng.Store, r.eng.Providers, wire, config.AgentKeys{Providers: map[string]string{"shell": p.ID}}); err == nil || !strings.Contains(err.Error(), "not an agent template") {
		t.Errorf("assigning a key to the shell template: %v", err)
	}

	for i, confinedGoal := range []bool{false, true} {
		pane := r.ws.Panes[i].ID
		sandbox := t.TempDir()
		mark := filepath.Join(sandbox, "mark")
		if _, err := r.eng.Workspaces.SetLaunch(ctx, r.ws.ID, pane, &workspace.Launch{Template: "fakeagent", Command: "sh",
			Args: []string{"-c", `printf "%s|%s|%s|%s\n" "$CLAUDE_CONFIG_DIR" "$ANTHROPIC_API_KEY$ANTHROPIC_AUTH_TOKEN" "$(cat "$CLAUDE_CONFIG_DIR/settings.json" | tr -d " \n")" "$(pwd)" > "$MARK"; exec sleep 60`},
			Env:  []string{"MARK=" + mark}}); err != nil {
			t.Fatal(err)
		}
		spec := confined(pane, sandbox, tools.ReadOnly, criterion.Spec{Kind: criterion.KindManual})
		if !confinedGoal {
			spec.Policy.SandboxDir = ""
		}
		// The goal ends once its pane has reported (its proxy ends with it).
		r.srv.Push(llmtest.Reply{Compute: func(llmtest.Request) llmtest.Reply {
			for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
				if b, _ := os.ReadFile(mark); strings.Contains(string(b), "\n") {
					break
				}
			}
			return abort()
		}})
		g, err := r.startAndWait(spec)
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Split(strings.TrimSpace(waitFile(t, mark)), "|")
		if len(got) != 4 {
			t.Fatalf("confined %v: the pane reported %q", confinedGoal, got)
		}
		cfgDir, keyVars, settings, cwd := got[0], got[1], got[2], got[3]
		if !strings.HasSuffix(cfgDir, "/agent-fakeagent") || keyVars != "" || cwd != sandbox {
			t.Errorf("confined %v: config dir %q, key variables %q, cwd %q (want %s)", confinedGoal, cfgDir, keyVars, cwd, sandbox)
		}
		var st struct {
			APIKeyHelper string            `json:"apiKeyHelper"`
			Env          map[string]string `json:"env"`
			Permissions  *struct{ Allow []string }
		}
		if err := json.Unmarshal([]byte(settings), &st); err != nil || !strings.Contains(st.APIKeyHelper, cfgDir) ||
			st.Env["ANTHROPIC_BASE_URL"] != "http://127.0.0.1:4999" || (st.Permissions != nil) != confinedGoal {
			t.Errorf("confined %v: settings.json %s (%v)", confinedGoal, settings, err)
		}
		if b, _ := os.ReadFile(filepath.Join(cfgDir, "clusterspace-api-key")); string(b) != key {
			t.Errorf("confined %v: the key file holds %q", confinedGoal, b)
		}
		if confinedGoal {
			if hosts := r.eng.agentHosts(ctx, g); len(hosts) != 1 || hosts[0] != "127.0.0.1:4999" {
				t.Errorf("the agent's hosts: %v, want the assigned provider's", hosts)
			}
			tabs := r.eng.Terminals.Tabs(pane)
			if len(tabs) == 0 || !tabs[len(tabs)-1].Confined {
				t.Errorf("the confined goal's agent tab is not confined: %+v", tabs)
			}
		}
	}
}

// A fleet task with `template:` gets a pane that starts as that template (here a config
// dir's templates/ file whose command leaves a mark); an unknown template refuses the fleet
// naming the task and the field, and makes no pane.
func TestFleetTaskPaneStartsAsItsTemplate(t *testing.T) {
	ctx := context.Background()
	configDir, out := t.TempDir(), t.TempDir()
	marker := markerTemplate(configDir, out)
	eng := openEngine(t, t.TempDir(), WithConfigDir(configDir))
	defer eng.Close()

	bad, err := fleet.Parse([]byte("name: bad\ntasks:\n  - id: build\n    goal: Build it\n    template: nope\n    check_shell: 'true'\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = eng.Fleets.Create(ctx, bad, fleet.Spec{})
	var fe *fleet.FieldError
	if !errors.As(err, &fe) || fe.Field != "template" || fe.Task != `"build"` || !strings.Contains(err.Error(), "marker") {
		t.Fatalf("an unknown template: %v, want a field error on task build's template naming the choices", err)
	}
	if eng.Workspaces.HasPane(ctx, "build-term") {
		t.Fatal("a refused fleet made its pane")
	}

	file, err := fleet.Parse([]byte("name: good\ntasks:\n  - id: build\n    goal: Build it\n    template: marker\n    check_shell: 'true'\n  - id: plain\n    goal: Look\n    check_shell: 'true'\n"))
	if err != nil {
		t.Fatal(err)
	}
	f := fleet.Fleet{ID: "fleet-t1", Name: file.Name}
	for _, ts := range file.Tasks {
		f.Tasks = append(f.Tasks, fleet.Task{TaskSpec: ts})
	}
	if err := eng.ensureFleetPanes(ctx, f, []string{"build-term", "plain-term"}); err != nil {
		t.Fatal(err)
	}
	_, p, err := eng.Workspaces.Find(ctx, "build-term")
	if err != nil {
		t.Fatal(err)
	}
	if p.Launch == nil || p.Launch.Template != "marker" || p.Launch.Command != "sh" {
		t.Fatalf("the build task's pane launch: %+v, want the marker template's sh", p.Launch)
	}
	if _, plain, _ := eng.Workspaces.Find(ctx, "plain-term"); plain.Launch != nil {
		t.Errorf("a task without template: got launch %+v, want the shell", plain.Launch)
	}
	eng.Panes.Wake(ctx, "build-term")
	if got := strings.TrimSpace(waitFile(t, marker)); got != "ran" {
		t.Fatalf("the marker template's command wrote %q, want \"ran\"", got)
	}
}

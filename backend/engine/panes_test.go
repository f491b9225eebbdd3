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

	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/goal/criterion"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
	"github.com/clusterspace/clusterspace/backend/terminal"
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

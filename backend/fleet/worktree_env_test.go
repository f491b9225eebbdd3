package fleet_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/clusterspace/clusterspace/backend/fleet"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
	"github.com/clusterspace/clusterspace/backend/worktree"
)

// Two isolated tasks run at once, and each one's setup starts the same dev server on $PORT:
// both serve, each its own worktree, because each task has its own range of ports. The
// task's confined shell and its check see the same PORT and the same TMPDIR and
// XDG_CACHE_HOME (its own scratch dir, writable in its sandbox); the .env `copy:` lists is in
// each worktree and on no branch; prune removes the scratch dirs.
func TestWorktreeTasksGetTheirOwnPortsScratchAndCopies(t *testing.T) {
	pids := filepath.Join(t.TempDir(), "pids")
	t.Cleanup(func() { killPIDs(pids) })
	show := `touch "$TMPDIR/scratch-ok" && echo "$PORT $TMPDIR $XDG_CACHE_HOME" > env.txt && cat .env`
	r := newRig(t, writer(map[string]string{"a-term": show, "b-term": show}))
	gitRepo(t, r.dir)
	os.WriteFile(filepath.Join(r.dir, ".env"), []byte("SECRET=local\n"), 0o600)
	f := r.run(`
name: ports
concurrency: 2
isolation: worktree
copy: [.env]
setup: 'python3 -m http.server "$PORT" --bind 127.0.0.1 >/dev/null 2>&1 & echo $! >> ` + pids + `; for i in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$PORT/" && exit 0; sleep 0.1; done; echo "nothing serves on port $PORT"; exit 1'
tasks:
  - {id: a, goal: Serve A, check_shell: 'test -f "$TMPDIR/scratch-ok" && grep -q SECRET=local .env && curl -sf "http://127.0.0.1:$PORT/env.txt" | grep -qx "$PORT $TMPDIR $XDG_CACHE_HOME"'}
  - {id: b, goal: Serve B, check_shell: 'test -f "$TMPDIR/scratch-ok" && grep -q SECRET=local .env && curl -sf "http://127.0.0.1:$PORT/env.txt" | grep -qx "$PORT $TMPDIR $XDG_CACHE_HOME"'}
`)
	if f.Status != fleet.StatusCompleted {
		t.Fatalf("fleet %s: %+v", f.Status, f.Tasks)
	}
	a, b := taskOf(t, f, "a").Worktree, taskOf(t, f, "b").Worktree
	if a.PortBase == 0 || a.PortBase == b.PortBase || a.PortCount != worktree.PortsPerRange || b.PortBase%worktree.PortsPerRange != 0 {
		t.Fatalf("port ranges: a %d+%d, b %d+%d", a.PortBase, a.PortCount, b.PortBase, b.PortCount)
	}
	seen := map[string]bool{}
	for _, wt := range []*fleet.Worktree{a, b} {
		env := gitIn(t, r.dir, "show", wt.Branch+":env.txt")
		want := strconv.Itoa(wt.PortBase) + " " + filepath.Join(wt.Scratch, "tmp") + " " + filepath.Join(wt.Scratch, "cache")
		if env != want || seen[env] {
			t.Errorf("%s's shell saw %q, want %q (and differing from the other task's)", wt.Branch, env, want)
		}
		seen[env] = true
		if files := strings.Fields(gitIn(t, r.dir, "ls-tree", "-r", "--name-only", wt.Branch)); slices.Contains(files, ".env") || !slices.Contains(files, "env.txt") {
			t.Errorf("%s holds %v: want env.txt and no .env", wt.Branch, files)
		}
		if _, err := os.Stat(filepath.Join(wt.Dir, ".env")); err != nil {
			t.Errorf("the worktree %s has no .env: %v", wt.Dir, err)
		}
	}
	if first := string(r.requests("a-term")[0].Body); !strings.Contains(first, "Ports "+strconv.Itoa(a.PortBase)+" to "+strconv.Itoa(a.PortBase+9)+" are yours alone") {
		t.Errorf("a's first prompt does not tell its agent its ports %d-%d", a.PortBase, a.PortBase+9)
	}
	g, _ := r.eng.Goals.Get(context.Background(), taskOf(t, f, "a").GoalID)
	if !slices.Contains(g.Spec.Settings.Env, "PORT="+strconv.Itoa(a.PortBase)) || g.Spec.Settings.ScratchDir != a.Scratch {
		t.Errorf("a's goal runs with env %q, scratch %q", g.Spec.Settings.Env, g.Spec.Settings.ScratchDir)
	}
	if _, err := r.eng.Fleets.Prune(context.Background(), f.ID); err != nil {
		t.Fatal(err)
	}
	for _, wt := range []*fleet.Worktree{a, b} {
		if _, err := os.Stat(wt.Scratch); !os.IsNotExist(err) {
			t.Errorf("the scratch dir %s is still there after prune (%v)", wt.Scratch, err)
		}
	}
}

// A file `copy:` lists that the checkout lacks fails the task before its setup, naming it.
func TestWorktreeCopyOfAMissingFileFailsTheTask(t *testing.T) {
	r := newRig(t, writer(nil))
	gitRepo(t, r.dir)
	f := r.run("name: m\nisolation: worktree\ncopy: [config/local.yaml]\nsetup: touch SETUP-RAN\ntasks:\n  - {id: a, goal: A, check_shell: \"true\"}\n")
	a := taskOf(t, f, "a")
	if a.Status != fleet.TaskFailed || !strings.Contains(a.Report, "config/local.yaml is not in the checkout") || a.GoalID != "" {
		t.Fatalf("a %s: %q", a.Status, a.Report)
	}
	if _, err := os.Stat(filepath.Join(a.Worktree.Dir, "SETUP-RAN")); !os.IsNotExist(err) {
		t.Errorf("the setup ran without the file (%v)", err)
	}
}

// A task still running when the app quits keeps its range when the app opens again: its
// resumed shell and check see the PORT they had, and a task started after the reopening
// gets another range, though nothing listens on the resumed task's ports yet.
func TestResumedTaskKeepsItsPorts(t *testing.T) {
	q := newQuitter()
	var mu sync.Mutex
	steps := map[string]int{}
	r := newRig(t, q.behave(func(pane string, turn int, req llmtest.Request) llmtest.Reply {
		mu.Lock()
		step := steps[pane]
		steps[pane]++
		mu.Unlock()
		switch step {
		case 0:
			return call("write_to_terminal", map[string]string{"pane_id": pane, "text": `echo "$PORT" > port.txt`})
		case 1:
			return call("wait", map[string]int{"ms": 500})
		}
		return claim(pane + " wrote its port")
	}))
	gitRepo(t, r.dir)
	first := r.start("name: first\nisolation: worktree\ntasks:\n  - {id: a, goal: A, check_shell: 'test \"$(cat port.txt)\" = \"$PORT\"'}\n")
	q.waitStarted(t, "a")
	before, _ := r.eng.Fleets.Get(context.Background(), first.ID)
	port := taskOf(t, before, "a").Worktree.PortBase
	r.close()
	q.reopen(r)
	second := r.start("name: second\nisolation: worktree\ntasks:\n  - {id: b, goal: B, check_shell: 'test \"$(cat port.txt)\" = \"$PORT\"'}\n")
	f1, f2 := r.wait(first.ID), r.wait(second.ID)
	if f1.Status != fleet.StatusCompleted || f2.Status != fleet.StatusCompleted {
		t.Fatalf("first %s %+v\nsecond %s %+v", f1.Status, f1.Tasks, f2.Status, f2.Tasks)
	}
	a, b := taskOf(t, f1, "a").Worktree, taskOf(t, f2, "b").Worktree
	if got := gitIn(t, r.dir, "show", a.Branch+":port.txt"); port == 0 || a.PortBase != port || got != strconv.Itoa(port) {
		t.Errorf("a had port %d; after the reopening its record says %d and its shell saw %s", port, a.PortBase, got)
	}
	if b.PortBase == 0 || b.PortBase == port {
		t.Errorf("b, started after the reopening, got port %d; a runs on %d", b.PortBase, port)
	}
}

// killPIDs ends the processes whose ids a test's setups wrote, one a line.
func killPIDs(file string) {
	b, _ := os.ReadFile(file)
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil && pid > 1 {
			syscall.Kill(pid, syscall.SIGKILL) // Best effort: it may have ended.
		}
	}
}

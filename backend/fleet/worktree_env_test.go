package fleet_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/clusterspace/clusterspace/backend/fleet"
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

// killPIDs ends the processes whose ids a test's setups wrote, one a line.
func killPIDs(file string) {
	b, _ := os.ReadFile(file)
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil && pid > 1 {
			syscall.Kill(pid, syscall.SIGKILL) // Best effort: it may have ended.
		}
	}
}

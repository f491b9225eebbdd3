package fleet_test

import (
	"context"
	"os"
	"os/exec"
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

// gitRepo makes dir a git repository with one commit holding shared.txt = "base".
func gitRepo(t *testing.T, dir string) {
	t.Helper()
	os.WriteFile(filepath.Join(dir, "shared.txt"), []byte("base\n"), 0o644)
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "."}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base"}} {
		gitIn(t, dir, args...)
	}
}

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// With isolation: worktree, two tasks writing the same file of one repository at once each
// work in their own worktree and see only their own change, which lands on their own
// branch; the main checkout is untouched; setup ran in each worktree first; a dependant
// starts from its dependency's branch; the report names branch and diff stat; prune removes
// the worktrees (refused while a task runs) and keeps the branches.
func TestWorktreeIsolationGivesEachTaskItsOwnBranch(t *testing.T) {
	r := newRig(t, func(pane string, turn int, req llmtest.Request) llmtest.Reply {
		letter := map[string]string{"a-term": "A", "b-term": "B"}[pane]
		switch {
		case letter != "" && turn == 0:
			return call("write_to_terminal", map[string]string{"pane_id": pane, "text": "cat shared.txt SETUP-MARK && echo " + letter + " > shared.txt"})
		case letter != "" && turn == 1:
			return call("wait", map[string]int{"ms": 500})
		}
		return claim(pane + " wrote its letter")
	})
	gitRepo(t, r.dir)
	f := r.start(`
name: parallel
isolation: worktree
setup: echo set up > SETUP-MARK
tasks:
  - {id: a, goal: Write A, check_shell: "grep -qx A shared.txt && test -f SETUP-MARK"}
  - {id: b, goal: Write B, check_shell: "grep -qx B shared.txt"}
  - {id: c, goal: Check A, depends_on: [a], check_shell: "grep -qx A shared.txt"}
`)
	if _, err := r.eng.Fleets.Prune(context.Background(), f.ID); err == nil || !strings.Contains(err.Error(), "is running in its worktree") {
		t.Fatalf("prune while tasks run: %v", err)
	}
	f = r.wait(f.ID)
	if f.Status != fleet.StatusCompleted {
		t.Fatalf("fleet %s: %+v\na's terminal: %s", f.Status, f.Tasks, r.requests("a-term")[1].LastToolResult())
	}
	a, b, c := taskOf(t, f, "a"), taskOf(t, f, "b"), taskOf(t, f, "c")
	if a.Worktree == nil || b.Worktree == nil || a.Worktree.Branch != "fleet/"+f.ID+"/a" || a.Worktree.Dir == b.Worktree.Dir {
		t.Fatalf("worktrees: a %+v, b %+v", a.Worktree, b.Worktree)
	}
	if got := gitIn(t, r.dir, "show", a.Worktree.Branch+":shared.txt"); got != "A" {
		t.Errorf("a's branch has shared.txt %q", got)
	}
	if got := gitIn(t, r.dir, "show", b.Worktree.Branch+":shared.txt"); got != "B" {
		t.Errorf("b's branch has shared.txt %q", got)
	}
	if got, _ := os.ReadFile(filepath.Join(r.dir, "shared.txt")); string(got) != "base\n" {
		t.Errorf("the main checkout changed: %q", got)
	}
	// Each saw its own file only: before writing, both read "base" (and the setup's mark).
	for _, p := range []string{"a-term", "b-term"} {
		if out := r.requests(p)[1].LastToolResult(); !strings.Contains(out, "base") || !strings.Contains(out, "set up") {
			t.Errorf("%s's terminal before its write: %s", p, out)
		}
	}
	if !strings.Contains(a.Worktree.DiffStat, "shared.txt") || !strings.Contains(a.Report, "Branch: "+a.Worktree.Branch) {
		t.Errorf("a's diff stat %q, report %q", a.Worktree.DiffStat, a.Report)
	}
	if c.Worktree == nil || c.Worktree.Base != a.Worktree.Commit {
		t.Errorf("c branched from %+v, want a's tip %s", c.Worktree, a.Worktree.Commit)
	}
	// The goal worked in the worktree: its sandbox was it.
	g, _ := r.eng.Goals.Get(context.Background(), a.GoalID)
	if g.Spec.Policy.SandboxDir != a.Worktree.WorkDir {
		t.Errorf("a's goal sandbox %s, want its worktree %s", g.Spec.Policy.SandboxDir, a.Worktree.WorkDir)
	}

	pruned, err := r.eng.Fleets.Prune(context.Background(), f.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range pruned.Tasks {
		if _, err := os.Stat(task.Worktree.Dir); !os.IsNotExist(err) || !task.Worktree.Pruned {
			t.Errorf("task %s's worktree %s is still there (%v)", task.ID, task.Worktree.Dir, err)
		}
	}
	if got := gitIn(t, r.dir, "show", b.Worktree.Branch+":shared.txt"); got != "B" {
		t.Errorf("prune lost b's branch: %q", got)
	}
	if list := gitIn(t, r.dir, "worktree", "list"); strings.Contains(list, "clusterspace-worktrees") {
		t.Errorf("git still lists the worktrees:\n%s", list)
	}
}

// A setup that fails fails its task with the setup's output, and blocks its dependants; a
// sandbox that is no git repository is refused when the fleet is created, naming the field.
func TestWorktreeSetupFailureFailsTheTask(t *testing.T) {
	r := newRig(t, func(pane string, turn int, req llmtest.Request) llmtest.Reply { return claim("done") })
	file, _ := fleet.Parse([]byte("name: s\nisolation: worktree\nsetup: echo SETUP-BOOM; exit 3\ntasks:\n  - {id: a, goal: A, check_shell: \"true\"}\n  - {id: b, goal: B, depends_on: [a], check_shell: \"true\"}\n"))
	if _, err := r.eng.Fleets.Create(context.Background(), file, r.spec()); err == nil || !strings.Contains(err.Error(), "isolation: ") || !strings.Contains(err.Error(), "not in a git repository") {
		t.Fatalf("isolation outside a repository: %v", err)
	}
	gitRepo(t, r.dir)
	f, err := r.eng.Fleets.Create(context.Background(), file, r.spec())
	if err != nil {
		t.Fatal(err)
	}
	f = r.wait(f.ID)
	a := taskOf(t, f, "a")
	if a.Status != fleet.TaskFailed || !strings.Contains(a.Report, "SETUP-BOOM") || !strings.Contains(a.Report, "exit status 3") || a.GoalID != "" {
		t.Fatalf("a %s: %q", a.Status, a.Report)
	}
	if b := taskOf(t, f, "b"); b.Status != fleet.TaskBlocked || len(r.requests("a-term")) != 0 {
		t.Fatalf("b %s; a reached the model %d times", b.Status, len(r.requests("a-term")))
	}
}

// In an isolated fleet, a task its agent hands out with assign_task works in that agent's
// own worktree (its sandbox), not in a new worktree outside it.
func TestAssignedTaskStaysInsideTheCallersWorktree(t *testing.T) {
	r := newRig(t, func(pane string, turn int, req llmtest.Request) llmtest.Reply {
		switch {
		case pane == "lead-term" && turn == 0:
			return call("assign_task", map[string]any{"pane_id": "helper", "description": "Help", "criterion": map[string]any{"check_shell": "true"}})
		case pane == "lead-term" && turn == 1:
			return call("wait_for_agent", map[string]any{"pane_id": "helper"})
		}
		return claim(pane + " done")
	})
	gitRepo(t, r.dir)
	f := r.run("name: lead\nisolation: worktree\ntasks:\n  - {id: lead, goal: Lead, check_shell: \"true\"}\n")
	if f.Status != fleet.StatusCompleted || len(f.Tasks) != 2 {
		t.Fatalf("fleet %s: %+v", f.Status, f.Tasks)
	}
	lead, helper := taskOf(t, f, "lead"), f.Tasks[1]
	g, _ := r.eng.Goals.Get(context.Background(), helper.GoalID)
	if helper.Worktree != nil || g.Spec.Policy.SandboxDir != lead.Worktree.WorkDir {
		t.Fatalf("the helper works in %q (worktree %+v), want its caller's worktree %s", g.Spec.Policy.SandboxDir, helper.Worktree, lead.Worktree.WorkDir)
	}
}

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

package fleet_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/fleet"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

// writer is an agent that writes "<LETTER> > <file>" in its worktree on its first turn for
// the tasks named in files (by pane), then claims done.
func writer(files map[string]string) behave {
	return func(pane string, turn int, req llmtest.Request) llmtest.Reply {
		cmd, ok := files[pane]
		switch {
		case ok && turn == 0:
			return call("write_to_terminal", map[string]string{"pane_id": pane, "text": cmd})
		case ok && turn == 1:
			return call("wait", map[string]int{"ms": 500})
		}
		return claim(pane + " done")
	}
}

// waitFile waits for a file to exist (a setup's sign of life).
func waitFile(t *testing.T, path string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(path); err == nil && len(b) > 0 {
			return
		}
	}
	t.Fatalf("%s never appeared", path)
}

// What a fleet's setup writes (npm ci's node_modules, a stamp differing per worktree) is not
// in any task's commit, though the repository does not ignore it: each branch holds its
// task's own work only, and a fan-in task merges its dependencies without a conflict on it.
func TestSetupFilesAreNeverCommitted(t *testing.T) {
	r := newRig(t, writer(map[string]string{"a-term": "echo A > a.txt", "b-term": "echo B > b.txt"}))
	gitRepo(t, r.dir)
	f := r.run(`
name: setup-files
isolation: worktree
setup: mkdir -p node_modules/pkg && echo built > node_modules/pkg/index.js && date +%s%N > setup-stamp.txt
tasks:
  - {id: a, goal: Write A, check_shell: "grep -qx A a.txt"}
  - {id: b, goal: Write B, check_shell: "grep -qx B b.txt"}
  - {id: c, goal: Fan in, depends_on: [a, b], check_shell: "test -f a.txt && test -f b.txt && test -f node_modules/pkg/index.js"}
`)
	if f.Status != fleet.StatusCompleted {
		t.Fatalf("fleet %s: %+v", f.Status, f.Tasks)
	}
	for _, id := range []string{"a", "b", "c"} {
		task := taskOf(t, f, id)
		files := gitIn(t, r.dir, "ls-tree", "-r", "--name-only", task.Worktree.Branch)
		if strings.Contains(files, "node_modules") || strings.Contains(files, "setup-stamp.txt") {
			t.Errorf("task %s's branch holds what setup wrote:\n%s", id, files)
		}
		if strings.Contains(task.Worktree.DiffStat, "setup-stamp") {
			t.Errorf("task %s's diff stat counts setup's files: %s", id, task.Worktree.DiffStat)
		}
	}
	if files := gitIn(t, r.dir, "ls-tree", "-r", "--name-only", taskOf(t, f, "c").Worktree.Branch); !strings.Contains(files, "a.txt") || !strings.Contains(files, "b.txt") {
		t.Errorf("c's branch lacks its dependencies' work:\n%s", files)
	}
	if ignore, _ := os.ReadFile(filepath.Join(r.dir, ".gitignore")); len(ignore) != 0 {
		t.Errorf("the repository's .gitignore was edited: %q", ignore)
	}
}

// A fan-in task whose dependencies changed the same file differently fails with a report
// naming the conflict and its file, and its worktree is not left mid-merge.
func TestFanInConflictIsReportedAndTheMergeAborted(t *testing.T) {
	r := newRig(t, writer(map[string]string{"a-term": "echo A > shared.txt", "b-term": "echo B > shared.txt"}))
	gitRepo(t, r.dir)
	f := r.run(`
name: conflict
isolation: worktree
tasks:
  - {id: a, goal: Write A, check_shell: "grep -qx A shared.txt"}
  - {id: b, goal: Write B, check_shell: "grep -qx B shared.txt"}
  - {id: c, goal: Fan in, depends_on: [a, b], check_shell: "true"}
`)
	c := taskOf(t, f, "c")
	if c.Status != fleet.TaskFailed || !strings.Contains(c.Report, "conflicts in shared.txt") || !strings.Contains(c.Report, "aborted") {
		t.Fatalf("c %s: %q", c.Status, c.Report)
	}
	if c.Worktree == nil {
		t.Fatal("c's worktree is not on record")
	}
	if out, err := exec.Command("git", "-C", c.Worktree.Dir, "rev-parse", "-q", "--verify", "MERGE_HEAD").CombinedOutput(); err == nil {
		t.Errorf("c's worktree is left mid-merge (MERGE_HEAD %s)", out)
	}
	if st := gitIn(t, c.Worktree.Dir, "status", "--porcelain"); st != "" {
		t.Errorf("c's worktree is not clean:\n%s", st)
	}
	if got, _ := os.ReadFile(filepath.Join(c.Worktree.Dir, "shared.txt")); strings.Contains(string(got), "<<<<") {
		t.Errorf("c's shared.txt has conflict markers: %q", got)
	}
}

// A task whose setup was cut off by the app quitting goes on when the app opens again, and
// its report counts its changes against where it started ("no changes" before).
func TestResumedWorktreeReportsItsChanges(t *testing.T) {
	r := newRig(t, writer(map[string]string{"a-term": "echo A > shared.txt"}))
	gitRepo(t, r.dir)
	out := t.TempDir()
	started, gate := filepath.Join(out, "started"), filepath.Join(out, "gate")
	f := r.start(`
name: resumed
isolation: worktree
setup: echo up > ` + started + ` && (test -f ` + gate + ` || exec sleep 60)
tasks:
  - {id: a, goal: Write A, check_shell: "grep -qx A shared.txt"}
`)
	waitFile(t, started)
	r.close()
	os.WriteFile(gate, []byte("open"), 0o644)
	r.open()
	f = r.wait(f.ID)
	a := taskOf(t, f, "a")
	if f.Status != fleet.StatusCompleted || a.Worktree == nil {
		t.Fatalf("fleet %s: %+v", f.Status, f.Tasks)
	}
	if a.Worktree.Base != gitIn(t, r.dir, "rev-parse", "main") {
		t.Errorf("a's base %q, want main's tip", a.Worktree.Base)
	}
	if !strings.Contains(a.Worktree.DiffStat, "shared.txt") || strings.Contains(a.Report, "no changes") {
		t.Errorf("a's diff stat %q, report %q", a.Worktree.DiffStat, a.Report)
	}
}

// alive tells whether a process still runs (not merely a zombie).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err != nil || !strings.Contains(string(st), ") Z ")
}

func gone(t *testing.T, pid int, what string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); alive(pid); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("%s (pid %d) still runs", what, pid)
		}
	}
}

// A setup runs in its own process group: when the app quits during it, what it started
// ends too. When the app was killed instead (so nothing ended it) and the fleet resumes,
// the old setup still running in the worktree is ended before a new one starts there.
func TestSetupEndsWithTheAppAndAnOldOneIsEndedOnResume(t *testing.T) {
	r := newRig(t, writer(map[string]string{"a-term": "echo A > shared.txt"}))
	gitRepo(t, r.dir)
	out := t.TempDir()
	child, gate, runs := filepath.Join(out, "child"), filepath.Join(out, "gate"), filepath.Join(out, "runs")
	f := r.start(`
name: groups
isolation: worktree
setup: echo run >> ` + runs + `; test -f ` + gate + ` && exit 0; sleep 300 & echo $! > ` + child + `; wait
tasks:
  - {id: a, goal: Write A, check_shell: "grep -qx A shared.txt"}
`)
	waitFile(t, child)
	b, _ := os.ReadFile(child)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	r.close()
	gone(t, pid, "the setup's child after the app quit")

	// What an app killed with kill -9 during setup leaves: the setup still running in the
	// worktree, in its own process group, holding the worktree's setup lock.
	wtDir := filepath.Join(r.dir, ".git", "clusterspace-worktrees", f.ID, "a")
	lockPath := filepath.Join(gitIn(t, wtDir, "rev-parse", "--path-format=absolute", "--git-dir"), "clusterspace-setup.lock")
	lock, err := os.OpenFile(lockPath, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatalf("the setup lock is still held after the app quit: %v", err)
	}
	old := exec.Command("sh", "-c", "sleep 300")
	old.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	old.ExtraFiles = []*os.File{lock}
	if err := old.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-old.Process.Pid, syscall.SIGKILL) })
	lock.Truncate(0)
	lock.WriteAt([]byte(strconv.Itoa(old.Process.Pid)+"\n"), 0)
	lock.Close()
	ended := make(chan error, 1)
	go func() { ended <- old.Wait() }()

	os.WriteFile(gate, []byte("open"), 0o644)
	r.open()
	f = r.wait(f.ID)
	if f.Status != fleet.StatusCompleted {
		t.Fatalf("fleet %s: %+v", f.Status, f.Tasks)
	}
	select {
	case err := <-ended:
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			t.Fatalf("the old setup ended with %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the old setup still runs in the worktree after the fleet resumed and ended")
	}
	if b, _ := os.ReadFile(runs); strings.Count(string(b), "run") != 2 {
		t.Errorf("setup ran %d times, want 2", strings.Count(string(b), "run"))
	}
}

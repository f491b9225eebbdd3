package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/cli"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

// stalledGoal is `goal run` whose model stalls mid-answer: the goal stays running, and the
// process owns its data dir, until the test ends.
type stalledGoal struct {
	cmd    *exec.Cmd
	id     string
	stderr *lockedBuffer
}

// startStalledGoal runs `goal run` on dataDir through `sh -c`, after shellPrefix (such as
// "umask 000;"), and waits until the goal is running and its model turn has begun.
func startStalledGoal(t *testing.T, dataDir, shellPrefix string) *stalledGoal {
	t.Helper()
	srv := llmtest.New(t, llmtest.Script{Replies: []llmtest.Reply{llmtest.Stalled("thinking", 2)}})
	sandbox := t.TempDir()
	cmd := exec.Command("sh", "-c", shellPrefix+` exec "$0" "$@"`, testBinary(t), "goal", "run", "--goal", "Think forever",
		"--check-manual", "--sandbox", sandbox, "--critic-every", "0", "--approve", "deny", "--json",
		"--base-url", srv.OpenAIURL(), "--model", "scripted", "--data-dir", dataDir)
	cmd.Dir = sandbox
	g := &stalledGoal{cmd: cmd, stderr: &lockedBuffer{}}
	cmd.Stderr = g.stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill() // Best effort: it may have exited already.
		cmd.Wait()
	})
	ids := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var e struct {
				GoalID string `json:"goalId"`
			}
			if json.Unmarshal(sc.Bytes(), &e) == nil && e.GoalID != "" {
				select {
				case ids <- e.GoalID:
				default:
				}
			}
		}
	}()
	select {
	case g.id = <-ids:
	case <-time.After(30 * time.Second):
		t.Fatalf("goal run printed no event in 30 s\n%s", g.stderr.String())
	}
	deadline := time.Now().Add(15 * time.Second)
	for len(srv.ChatRequests()) < 1 {
		if time.Now().After(deadline) {
			t.Fatalf("the goal never asked the model\n%s", g.stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	return g
}

// A second serve on a data dir is refused with exit 1, naming the first by PID.
func TestDataDirServeTwiceRefusesTheSecond(t *testing.T) {
	dir := t.TempDir()
	first := startServe(t, dir, "correct horse battery")
	code, _, errs := runBinary(t, "serve", "--addr", "127.0.0.1:0", "--data-dir", dir)
	want := "the data dir " + dir + " is in use by PID " + strconv.Itoa(first.cmd.Process.Pid) + " (serve since "
	if code != cli.ExitError || !strings.Contains(errs, want) || !strings.Contains(errs, "stop it or use another --data-dir") {
		t.Fatalf("second serve: exit %d, stderr %q\nwant exit 1 and %q", code, errs, want)
	}
	first.Stop(t)
	// Once the owner is gone, the data dir is free again.
	startServe(t, dir, "correct horse battery").Stop(t)
}

// goal list and goal show beside a running `goal run` read its goal without touching it, and
// a goal resume of that goal (a second writer) is refused.
func TestDataDirReadersLeaveARunningGoalAlone(t *testing.T) {
	dir := t.TempDir()
	a := startStalledGoal(t, dir, "")

	code, out, errs := runBinary(t, "goal", "list", "--json", "--data-dir", dir)
	if code != 0 {
		t.Fatalf("goal list beside a running goal: exit %d\n%s", code, errs)
	}
	var listed struct{ ID, Status string }
	json.Unmarshal([]byte(strings.TrimSpace(out)), &listed)
	if listed.ID != a.id || listed.Status != "running" {
		t.Fatalf("goal list: %s", out)
	}

	code, out, errs = runBinary(t, "goal", "resume", a.id, "--data-dir", dir)
	want := "is in use by PID " + strconv.Itoa(a.cmd.Process.Pid) + " (goal run since "
	if code != cli.ExitError || !strings.Contains(errs, want) {
		t.Fatalf("goal resume of a running goal: exit %d, %s%s\nwant exit 1 and %q", code, out, errs, want)
	}

	code, out, errs = runBinary(t, "goal", "show", a.id, "--data-dir", dir)
	if code != 0 || !strings.Contains(out, a.id+"  running") {
		t.Fatalf("goal show: exit %d\n%s%s", code, out, errs)
	}
	if strings.Contains(out, "interrupted") || strings.Contains(out, "the app stopped") {
		t.Fatalf("a reader marked the running goal interrupted:\n%s", out)
	}
	if a.cmd.ProcessState != nil {
		t.Fatalf("goal run ended: %s", a.stderr.String())
	}
}

// The data dir is 0700 and the database, -wal, -shm, keys and lock 0600 whatever the umask,
// looked at while `goal run` has them all open; a pre-existing 0755 dir is tightened.
func TestDataDirPrivateWhateverTheUmask(t *testing.T) {
	for _, umask := range []string{"000", "022"} {
		for _, existing := range []bool{false, true} {
			dir := filepath.Join(t.TempDir(), "data")
			if existing {
				if err := os.Mkdir(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				os.Chmod(dir, 0o755) // the test's own umask may have narrowed it
			}
			g := startStalledGoal(t, dir, "umask "+umask+";")
			wantModes(t, dir, map[string]os.FileMode{".": 0o700, "clusterspace.db": 0o600, "clusterspace.db-wal": 0o600,
				"clusterspace.db-shm": 0o600, "secrets.key": 0o600, "lock": 0o600})
			if existing && !strings.Contains(g.stderr.String(), "made the data dir private") {
				t.Errorf("umask %s: tightening the dir was not logged: %s", umask, g.stderr.String())
			}
			g.cmd.Process.Kill()
			g.cmd.Wait()
		}
	}
	// goal list alone creates a private data dir and database too.
	dir := filepath.Join(t.TempDir(), "data")
	out, err := exec.Command("sh", "-c", `umask 000; exec "$0" goal list --data-dir "$1"`, testBinary(t), dir).CombinedOutput()
	if err != nil {
		t.Fatalf("goal list under umask 000: %v\n%s", err, out)
	}
	wantModes(t, dir, map[string]os.FileMode{".": 0o700, "clusterspace.db": 0o600, "lock": 0o600})
}

func wantModes(t *testing.T, dir string, want map[string]os.FileMode) {
	t.Helper()
	for name, mode := range want {
		info, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if got := info.Mode().Perm(); got != mode {
			t.Errorf("%s: mode %04o, want %04o", name, got, mode)
		}
	}
}

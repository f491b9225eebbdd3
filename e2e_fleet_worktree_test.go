package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/cli"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

// `fleet run` killed with kill -9 while its setup runs (npm ci taking its time), then `fleet
// resume`: the old setup is ended before the new one starts in the same worktree (they never
// run together), nothing of the setup's output is committed, and the task's report counts
// its own change on its branch rather than "no changes".
func TestFleetCLIKillDuringSetupThenResume(t *testing.T) {
	m := newFleetModel(t, func(pane string, turn int) llmtest.Reply {
		if turn == 0 {
			return toolCall("write_to_terminal", map[string]any{"pane_id": pane, "text": "echo A > shared.txt"})
		}
		return fleetClaim(pane + " wrote shared.txt")
	})
	sandbox, dataDir, out := t.TempDir(), t.TempDir(), t.TempDir()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"commit", "-q", "--allow-empty", "-m", "base"}} {
		c := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-C", sandbox}, args...)...)
		if b, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, b)
		}
	}
	child, gate, runs := filepath.Join(out, "child"), filepath.Join(out, "gate"), filepath.Join(out, "runs")
	// The first setup starts a long child and waits for it; the second (once the gate is
	// open) notes whether the first's child still runs (a zombie has ended), and writes a file git does not ignore.
	setup := `echo run >> ` + runs + `; if test -f ` + gate + `; then st=$(cut -d" " -f3 /proc/$(cat ` + child + `)/stat 2>/dev/null); [ -n "$st" ] && [ "$st" != Z ] && echo OVERLAP >> ` + runs +
		`; mkdir -p node_modules && echo x > node_modules/dep.js; exit 0; fi; sleep 300 & echo $! > ` + child + `; wait`
	cmd := fleetCmd(t, m, `
name: killed-in-setup
isolation: worktree
setup: '`+setup+`'
tasks:
  - {id: a, goal: Write A, pane: a-term, check_shell: "grep -qx A shared.txt"}
`, sandbox, dataDir, "--json")
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var fleetID string
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var e struct{ FleetID string }
			if json.Unmarshal(sc.Bytes(), &e) == nil && e.FleetID != "" {
				mu.Lock()
				fleetID = e.FleetID
				mu.Unlock()
			}
		}
	}()
	var childPID int
	for deadline := time.Now().Add(30 * time.Second); childPID == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the setup never started its child")
		}
		b, _ := os.ReadFile(child)
		childPID, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	t.Cleanup(func() { syscall.Kill(childPID, syscall.SIGKILL) })
	cmd.Process.Kill() // SIGKILL: nothing of the app ends the setup
	cmd.Wait()
	mu.Lock()
	id := fleetID
	mu.Unlock()
	if id == "" {
		t.Fatal("fleet run printed no fleet id before it was killed")
	}

	os.WriteFile(gate, []byte("open"), 0o644)
	code, stdoutText, errs := runToEnd(t, exec.Command(testBinary(t), "fleet", "resume", id, "--base-url", m.srv.OpenAIURL(), "--model", "scripted",
		"--data-dir", dataDir, "--approve", "deny"))
	if code != cli.ExitOK {
		t.Fatalf("resume: exit %d\n%s\n%s", code, stdoutText, errs)
	}
	if b, _ := os.ReadFile(runs); strings.Contains(string(b), "OVERLAP") || strings.Count(string(b), "run") != 2 {
		t.Errorf("the setups' log (a second run while the first still ran says OVERLAP):\n%s", b)
	}
	if st, err := os.ReadFile("/proc/" + strconv.Itoa(childPID) + "/stat"); err == nil && !strings.Contains(string(st), ") Z ") {
		t.Errorf("the first setup's child (pid %d) still runs after the resume", childPID)
	}
	show, err := exec.Command(testBinary(t), "fleet", "show", id, "--json", "--data-dir", dataDir).Output()
	var f struct {
		Tasks []struct {
			Report   string
			Worktree struct{ DiffStat string }
		}
	}
	json.Unmarshal(show, &f)
	if err != nil || len(f.Tasks) != 1 || !strings.Contains(f.Tasks[0].Worktree.DiffStat, "shared.txt") || strings.Contains(f.Tasks[0].Report, "no changes") {
		t.Errorf("fleet show after the resume (want a's diff stat naming shared.txt): %v\n%s", err, show)
	}
	files, _ := exec.Command("git", "-C", sandbox, "ls-tree", "-r", "--name-only", "fleet/"+id+"/a").Output()
	if !strings.Contains(string(files), "shared.txt") || strings.Contains(string(files), "node_modules") {
		t.Errorf("a's branch holds (want shared.txt, not the setup's node_modules):\n%s", files)
	}
}

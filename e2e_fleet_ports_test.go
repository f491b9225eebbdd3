package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/clusterspace/clusterspace/backend/cli"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

// `fleet run` in a repository (no sandbox: the tasks' shells are the person's own), two
// isolated tasks at once: each agent starts the same dev server command on $PORT in its
// pane, and each check reaches its own task's server, which serves that task's worktree;
// without a port range per task the second server could not bind, and a check would reach
// the other task's. The shell and the check see the same PORT and TMPDIR, which differ per
// task; the .env `copy:` lists is in each worktree and on no branch.
func TestFleetCLIWorktreeTasksServeOnTheirOwnPorts(t *testing.T) {
	pids := filepath.Join(t.TempDir(), "pids")
	t.Cleanup(func() {
		b, _ := os.ReadFile(pids)
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil && pid > 1 {
				syscall.Kill(pid, syscall.SIGKILL) // Best effort: the server may have ended with its pane.
			}
		}
	})
	serve := `python3 -m http.server "$PORT" --bind 127.0.0.1 >/dev/null 2>&1 & echo $! >> ` + pids +
		`; echo "$PORT $TMPDIR" > env.txt; for i in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$PORT/" && break; sleep 0.1; done`
	m := newFleetModel(t, func(pane string, turn int) llmtest.Reply {
		switch turn {
		case 0:
			return toolCall("write_to_terminal", map[string]any{"pane_id": pane, "text": serve})
		case 1:
			return toolCall("wait", map[string]int{"ms": 1500})
		}
		return fleetClaim(pane + " serves on its port")
	})
	repo, dataDir := t.TempDir(), t.TempDir()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"commit", "-q", "--allow-empty", "-m", "base"}} {
		if b, err := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-C", repo}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, b)
		}
	}
	os.WriteFile(filepath.Join(repo, ".env"), []byte("DB_URL=local\n"), 0o600)
	check := `test -f .env && curl -sf "http://127.0.0.1:$PORT/env.txt" | grep -qx "$PORT $TMPDIR"`
	file := filepath.Join(t.TempDir(), "fleet.yaml")
	os.WriteFile(file, []byte(`
name: dev-servers
concurrency: 2
isolation: worktree
copy: [.env]
tasks:
  - {id: a, goal: Serve A, pane: a-term, check_shell: '`+check+`'}
  - {id: b, goal: Serve B, pane: b-term, check_shell: '`+check+`'}
`), 0o600)
	cmd := exec.Command(testBinary(t), "fleet", "run", file, "--base-url", m.srv.OpenAIURL(), "--model", "scripted",
		"--data-dir", dataDir, "--approve", "deny", "--critic-every", "0", "--json")
	cmd.Dir = repo
	code, out, errs := runToEnd(t, cmd)
	if code != cli.ExitOK {
		t.Fatalf("exit %d\n%s\n%s\na's terminal: %s", code, out, errs, lastResult(m, "a-term"))
	}
	id := lastJSONField(out, "fleetId")
	show, err := exec.Command(testBinary(t), "fleet", "show", id, "--json", "--data-dir", dataDir).Output()
	var f struct {
		Tasks []struct {
			ID       string
			Worktree struct {
				Dir, Branch, Scratch string
				PortBase, PortCount  int
			}
		}
	}
	if err != nil || json.Unmarshal(show, &f) != nil || len(f.Tasks) != 2 {
		t.Fatalf("fleet show %s: %v\n%s", id, err, show)
	}
	seen := map[string]bool{}
	for _, task := range f.Tasks {
		wt := task.Worktree
		env, err := exec.Command("git", "-C", repo, "show", wt.Branch+":env.txt").Output()
		want := strconv.Itoa(wt.PortBase) + " " + filepath.Join(wt.Scratch, "tmp") + "\n"
		if err != nil || string(env) != want || seen[string(env)] || wt.PortCount != 10 {
			t.Errorf("task %s's shell saw %q (%v), want %q, differing from the other task's (ports %d+%d)", task.ID, env, err, want, wt.PortBase, wt.PortCount)
		}
		seen[string(env)] = true
		files, _ := exec.Command("git", "-C", repo, "ls-tree", "-r", "--name-only", wt.Branch).Output()
		if slices.Contains(strings.Fields(string(files)), ".env") {
			t.Errorf("task %s's branch holds the copied .env:\n%s", task.ID, files)
		}
		if b, err := os.ReadFile(filepath.Join(wt.Dir, ".env")); err != nil || string(b) != "DB_URL=local\n" {
			t.Errorf("task %s's worktree has .env %q (%v)", task.ID, b, err)
		}
	}
}

// Bad `copy:` entries are refused with exit 64 before anything runs, naming the field and
// the entry's line.
func TestFleetCLIRefusesBadCopyWith64(t *testing.T) {
	m := newFleetModel(t, func(string, int) llmtest.Reply { return fleetClaim("x") })
	head := "name: c\nisolation: worktree\ncopy:\n"
	tail := "tasks:\n  - {id: a, goal: A}\n"
	cases := map[string]string{
		head + "  - /etc/hosts\n" + tail:              `line 4: copy: "/etc/hosts" is absolute`,
		head + "  - .env\n  - ../other/.env\n" + tail: `line 5: copy: "../other/.env" leaves the repository`,
		head + "  - \"\"\n" + tail:                    `line 4: copy: an entry is empty`,
		head + "  - \"a\\x07b\"\n" + tail:             `line 4: copy: "a\ab" has a control character`,
		"name: c\ncopy: [.env]\n" + tail:              `line 2: copy: copies files into each new worktree, and no task has isolation: worktree`,
	}
	for yaml, want := range cases {
		code, out, errs := runToEnd(t, fleetCmd(t, m, yaml, t.TempDir(), t.TempDir()))
		if code != cli.ExitUsage || !strings.Contains(errs, want) {
			t.Errorf("%q: exit %d, stderr %q, want 64 and %q (stdout %q)", yaml, code, errs, want, out)
		}
	}
	if n := len(m.order()); n != 0 {
		t.Fatalf("a refused file reached the model %d times", n)
	}
}

// lastResult is the last tool result a pane's agent was shown, for a failure's message.
func lastResult(m *fleetModel, pane string) string {
	reqs := m.requests(pane)
	if len(reqs) == 0 {
		return "(no request)"
	}
	return reqs[len(reqs)-1].LastToolResult()
}

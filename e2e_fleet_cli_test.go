package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/cli"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

// fleetModel is one scripted server answering for every task's agent: it tells them apart by
// the pane their goal prompt names, and records what each was asked, in order.
type fleetModel struct {
	srv   *llmtest.Server
	panes *llmtest.Panes
}

func newFleetModel(t *testing.T, agent func(pane string, turn int) llmtest.Reply) *fleetModel {
	panes := llmtest.ByPane(func(pane string, turn int, _ llmtest.Request) llmtest.Reply { return agent(pane, turn) })
	return &fleetModel{srv: llmtest.New(t, llmtest.Script{Replies: []llmtest.Reply{panes.Reply()}}), panes: panes}
}

func (m *fleetModel) requests(pane string) []llmtest.Request { return m.panes.Requests(pane) }

func (m *fleetModel) order() []string { return m.panes.Order() }

// fleetCmd is `clusterspace fleet run FILE` against the model, in a sandbox, with args added.
func fleetCmd(t *testing.T, m *fleetModel, yaml, sandbox, dataDir string, args ...string) *exec.Cmd {
	t.Helper()
	base := []string{"fleet", "run", tempFile(t, "fleet.yaml", yaml), "--base-url", m.srv.OpenAIURL(), "--model", "scripted", "--sandbox", sandbox,
		"--data-dir", dataDir, "--approve", "deny", "--critic-every", "0"}
	cmd := exec.Command(testBinary(t), append(base, args...)...)
	cmd.Dir = sandbox
	return cmd
}

func fleetClaim(rationale string) llmtest.Reply {
	return toolCall("claim_complete", map[string]string{"rationale": rationale})
}

// fleetResume is `clusterspace fleet resume ID` against the model, on dataDir.
func fleetResume(t *testing.T, m *fleetModel, id, dataDir string) (code int, stdout, stderr string) {
	t.Helper()
	return runToEnd(t, exec.Command(testBinary(t), "fleet", "resume", id, "--base-url", m.srv.OpenAIURL(), "--model", "scripted",
		"--data-dir", dataDir, "--approve", "deny"))
}

// fleetShow reads `clusterspace fleet show ID --json` into v, failing the test when the
// command fails or prints no JSON; it returns what was printed, for a failure's message.
func fleetShow(t *testing.T, id, dataDir string, v any) string {
	t.Helper()
	show, err := exec.Command(testBinary(t), "fleet", "show", id, "--json", "--data-dir", dataDir).Output()
	if err != nil || json.Unmarshal(show, v) != nil {
		t.Fatalf("fleet show %s --json: %v\n%s", id, err, show)
	}
	return string(show)
}

// wantFleetFilesRefused runs each fleet file of cases and wants exit 64 with the case's
// message on stderr, and that none of them reached the model.
func wantFleetFilesRefused(t *testing.T, m *fleetModel, cases map[string]string) {
	t.Helper()
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

// The example, run headless: build writes dist/ through its real terminal, test
// starts only after build verified and reads build's report in its first prompt; exit 0.
func TestFleetCLIRunsTasksInDependencyOrder(t *testing.T) {
	m := newFleetModel(t, func(pane string, turn int) llmtest.Reply {
		switch {
		case pane == "build-term" && turn == 0:
			return toolCall("write_to_terminal", map[string]any{"pane_id": pane, "text": "mkdir -p dist && echo app > dist/app"})
		case pane == "build-term":
			return fleetClaim("BUILD-REPORT: dist/app written")
		}
		return fleetClaim("tests pass")
	})
	sandbox := t.TempDir()
	code, out, errs := runToEnd(t, fleetCmd(t, m, `
name: release
concurrency: 2
tasks:
  - id: build
    goal: Build the project and write dist/
    pane: build-term
    role: Builder
    check_shell: test -s dist/app
  - id: test
    goal: Run the test suite against dist/
    pane: test-term
    role: Tester
    depends_on: [build]
    check_shell: test -d dist
`, sandbox, t.TempDir()))
	if code != cli.ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	order := m.order()
	if slices.Index(order, "test-term:0") < slices.Index(order, "build-term:1") {
		t.Fatalf("test started before build claimed: %v", order)
	}
	first := string(m.requests("test-term")[0].Body)
	if !strings.Contains(first, "BUILD-REPORT: dist/app written") || !strings.Contains(first, "Verification: Shell exited 0, as wanted.") {
		t.Fatalf("test's first prompt lacks build's report")
	}
	wantOutput(t, out, "task build            running", "[build] step 1    ok  write_to_terminal", "task build            completed  Claim: BUILD-REPORT",
		"task test             completed", "fleet fleet-", " completed\n")
	wantFiles(t, sandbox, "dist/app") // the build's terminal worked in the sandbox
}

// A task that aborts blocks what depends on it: the run fails with exit 1, saying why, and
// the blocked task never reaches the model.
func TestFleetCLIFailedDependencyBlocksAndExits1(t *testing.T) {
	m := newFleetModel(t, func(pane string, turn int) llmtest.Reply {
		if pane == "a-term" {
			return toolCall("abort_with_report", map[string]string{"reason": "no compiler", "what_was_learned": "gcc is missing"})
		}
		return fleetClaim("done")
	})
	code, out, errs := runToEnd(t, fleetCmd(t, m, `
name: blocked
tasks:
  - {id: a, goal: Build it, check_shell: "true"}
  - {id: b, goal: Test it, depends_on: [a], check_shell: "true"}
`, t.TempDir(), t.TempDir(), "--json"))
	if code != cli.ExitGoalFailed {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	var blocked, last map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var e map[string]any
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("not a JSON line: %q", sc.Text())
		}
		if e["status"] == "blocked" {
			blocked = e
		}
		last = e
	}
	if blocked == nil || blocked["taskId"] != "b" || !strings.Contains(blocked["reason"].(string), "task a, which it depends on, aborted: Aborted by the agent: no compiler") {
		t.Fatalf("no blocked event for b: %v\n%s", blocked, out)
	}
	if last["type"] != "ended" || last["status"] != "failed" {
		t.Fatalf("last line %v", last)
	}
	if n := len(m.requests("b-term")); n != 0 {
		t.Fatalf("blocked task b asked the model %d times", n)
	}
}

// A bad file is refused with 64, naming the task and the field, before anything runs.
func TestFleetCLIRefusesBadFilesWith64(t *testing.T) {
	m := newFleetModel(t, func(string, int) llmtest.Reply { return fleetClaim("x") })
	cases := map[string]string{
		"name: c\ntasks:\n  - {id: a, goal: A, depends_on: [b]}\n  - {id: b, goal: B, depends_on: [a]}\n": `task "b": depends_on: a dependency cycle: a → b → a`,
		"name: c\ntasks:\n  - {id: a, goal: A, depends_on: [zzz]}\n":                                      `line 3: task "a": depends_on: no task has id "zzz"`,
		"name: c\ntasks:\n  - id: a\n    goal: \"A\\0B\"\n":                                               `line 4: task "a": goal: holds the control character U+0000`,
		"name: c\ntasks:\n  - id: a\n    pane: \"a\\e[2J\"\n    goal: A\n":                                `line 4: task "a": pane: holds the control character U+001B`,
		"name: c\ntasks:\n  - id: a\n    goal: " + strings.Repeat("g", 70<<10) + "\n":                     `line 4: task "a": goal: is 71680 bytes; at most 65536`,
		"name: c\ntasks:\n  - {id: a, goal: A, check_shell: ls, check_manual: true}\n":                    `task "a": check_manual: conflicts with check_shell`,
		"name: c\ntasks:\n  - {id: a, goal: A, json_source: claim, check_json: \"(((\"}\n":                `task "a": check_json:`,
		"name: c\nconcurrency: 99\ntasks:\n  - {id: a, goal: A}\n":                                        `concurrency: must be a whole number from 1 to 20`,
	}
	wantFleetFilesRefused(t, m, cases)
}

// kill -9 while the second task's model turn streams; `fleet resume` finishes the fleet
// without redoing the verified first task.
func TestFleetCLIKillThenResume(t *testing.T) {
	var stall atomic.Bool
	stall.Store(true)
	m := newFleetModel(t, func(pane string, turn int) llmtest.Reply {
		if pane == "b-term" && stall.Load() {
			return llmtest.Stalled("thinking", 2)
		}
		return fleetClaim(pane + " done")
	})
	sandbox, dataDir := t.TempDir(), t.TempDir()
	cmd := fleetCmd(t, m, `
name: resumable
tasks:
  - {id: a, goal: First, pane: a-term, check_shell: "true"}
  - {id: b, goal: Second, pane: b-term, depends_on: [a], check_shell: "true"}
`, sandbox, dataDir, "--json")
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var fleetID, goalA string
	sc := bufio.NewScanner(stdout)
	for sc.Scan() { // until b runs: a is verified and stored by then
		var e struct{ FleetID, TaskID, Status, GoalID string }
		json.Unmarshal(sc.Bytes(), &e)
		fleetID = e.FleetID
		if e.TaskID == "a" && e.GoalID != "" {
			goalA = e.GoalID
		}
		if e.TaskID == "b" && e.Status == "running" {
			break
		}
	}
	waitFor(t, "task b to ask the model", func() bool { return len(m.requests("b-term")) > 0 })
	cmd.Process.Kill() // SIGKILL
	cmd.Wait()
	asked := len(m.requests("a-term"))

	stall.Store(false)
	code, out, errs := fleetResume(t, m, fleetID, dataDir)
	if code != cli.ExitOK {
		t.Fatalf("resume: exit %d\n%s\n%s", code, out, errs)
	}
	if n := len(m.requests("a-term")); n != asked {
		t.Fatalf("the verified task a asked the model again (%d → %d)", asked, n)
	}
	var f struct {
		Status string
		Tasks  []struct{ ID, Status, GoalID string }
	}
	show := fleetShow(t, fleetID, dataDir, &f)
	if f.Status != "completed" || len(f.Tasks) != 2 || f.Tasks[0].GoalID != goalA || f.Tasks[0].Status != "completed" || f.Tasks[1].Status != "completed" {
		t.Fatalf("after resume: %s (a's goal was %s)", show, goalA)
	}
	list, _ := exec.Command(testBinary(t), "fleet", "list", "--data-dir", dataDir).Output()
	if !strings.Contains(string(list), fleetID) || !strings.Contains(string(list), "2/2 tasks completed") {
		t.Fatalf("fleet list: %s", list)
	}
}

// `isolation: worktree` headless: two tasks write the same file of the sandbox's repository,
// each on its own branch; the summary and `fleet show` list the branches and diff stats;
// `fleet prune` removes the worktrees and keeps the branches.
func TestFleetCLIWorktreeIsolationShowAndPrune(t *testing.T) {
	m := newFleetModel(t, func(pane string, turn int) llmtest.Reply {
		if turn == 0 {
			return toolCall("write_to_terminal", map[string]any{"pane_id": pane, "text": "echo " + pane + " > shared.txt"})
		}
		return fleetClaim(pane + " wrote shared.txt")
	})
	sandbox, dataDir := t.TempDir(), t.TempDir()
	gitRepo(t, sandbox, nil)
	code, out, errs := runToEnd(t, fleetCmd(t, m, `
name: parallel
isolation: worktree
tasks:
  - {id: a, goal: Write a, pane: a-term, check_shell: "grep -qx a-term shared.txt"}
  - {id: b, goal: Write b, pane: b-term, check_shell: "grep -qx b-term shared.txt"}
`, sandbox, dataDir))
	if code != cli.ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	fleetID := regexp.MustCompile(`fleet (fleet-[0-9a-f]+) `).FindStringSubmatch(out)
	if fleetID == nil || !strings.Contains(out, "branch fleet/"+fleetID[1]+"/a") || !strings.Contains(out, "shared.txt | 1 +") {
		t.Fatalf("the summary lacks the branches and diff stats:\n%s", out)
	}
	for _, task := range []string{"a", "b"} {
		got, err := exec.Command("git", "-C", sandbox, "show", "fleet/"+fleetID[1]+"/"+task+":shared.txt").Output()
		if err != nil || strings.TrimSpace(string(got)) != task+"-term" {
			t.Errorf("branch of %s has shared.txt %q (%v)", task, got, err)
		}
	}
	show, err := exec.Command(testBinary(t), "fleet", "show", fleetID[1], "--data-dir", dataDir).Output()
	if err != nil || !strings.Contains(string(show), "branch fleet/"+fleetID[1]+"/b") || !strings.Contains(string(show), "1 file changed") {
		t.Fatalf("fleet show: %v\n%s", err, show)
	}
	code, out, errs = runToEnd(t, exec.Command(testBinary(t), "fleet", "prune", fleetID[1], "--data-dir", dataDir))
	if code != cli.ExitOK || !strings.Contains(out, "worktree removed; branch fleet/"+fleetID[1]+"/a kept") {
		t.Fatalf("prune: exit %d\n%s\n%s", code, out, errs)
	}
	if list, _ := exec.Command("git", "-C", sandbox, "worktree", "list").Output(); strings.Contains(string(list), "clusterspace-worktrees") {
		t.Fatalf("worktrees left after prune:\n%s", list)
	}
}

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
	gitRepo(t, repo, nil)
	os.WriteFile(filepath.Join(repo, ".env"), []byte("DB_URL=local\n"), 0o600)
	check := `test -f .env && curl -sf "http://127.0.0.1:$PORT/env.txt" | grep -qx "$PORT $TMPDIR"`
	file := tempFile(t, "fleet.yaml", `
name: dev-servers
concurrency: 2
isolation: worktree
copy: [.env]
tasks:
  - {id: a, goal: Serve A, pane: a-term, check_shell: '`+check+`'}
  - {id: b, goal: Serve B, pane: b-term, check_shell: '`+check+`'}
`)
	cmd := exec.Command(testBinary(t), "fleet", "run", file, "--base-url", m.srv.OpenAIURL(), "--model", "scripted",
		"--data-dir", dataDir, "--approve", "deny", "--critic-every", "0", "--json")
	cmd.Dir = repo
	code, out, errs := runToEnd(t, cmd)
	if code != cli.ExitOK {
		t.Fatalf("exit %d\n%s\n%s\na's terminal: %s", code, out, errs, lastResult(m, "a-term"))
	}
	id := lastJSONField(out, "fleetId")
	var f struct {
		Tasks []struct {
			ID       string
			Worktree struct {
				Dir, Branch, Scratch string
				PortBase, PortCount  int
			}
		}
	}
	if show := fleetShow(t, id, dataDir, &f); len(f.Tasks) != 2 {
		t.Fatalf("fleet show %s:\n%s", id, show)
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
	wantFleetFilesRefused(t, m, cases)
}

// lastResult is the last tool result a pane's agent was shown, for a failure's message.
func lastResult(m *fleetModel, pane string) string {
	reqs := m.requests(pane)
	if len(reqs) == 0 {
		return "(no request)"
	}
	return reqs[len(reqs)-1].LastToolResult()
}

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
	gitRepo(t, sandbox, nil)
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
	code, stdoutText, errs := fleetResume(t, m, id, dataDir)
	if code != cli.ExitOK {
		t.Fatalf("resume: exit %d\n%s\n%s", code, stdoutText, errs)
	}
	if b, _ := os.ReadFile(runs); strings.Contains(string(b), "OVERLAP") || strings.Count(string(b), "run") != 2 {
		t.Errorf("the setups' log (a second run while the first still ran says OVERLAP):\n%s", b)
	}
	if st, err := os.ReadFile("/proc/" + strconv.Itoa(childPID) + "/stat"); err == nil && !strings.Contains(string(st), ") Z ") {
		t.Errorf("the first setup's child (pid %d) still runs after the resume", childPID)
	}
	var f struct {
		Tasks []struct {
			Report   string
			Worktree struct{ DiffStat string }
		}
	}
	if show := fleetShow(t, id, dataDir, &f); len(f.Tasks) != 1 || !strings.Contains(f.Tasks[0].Worktree.DiffStat, "shared.txt") || strings.Contains(f.Tasks[0].Report, "no changes") {
		t.Errorf("fleet show after the resume (want a's diff stat naming shared.txt):\n%s", show)
	}
	files, _ := exec.Command("git", "-C", sandbox, "ls-tree", "-r", "--name-only", "fleet/"+id+"/a").Output()
	if !strings.Contains(string(files), "shared.txt") || strings.Contains(string(files), "node_modules") {
		t.Errorf("a's branch holds (want shared.txt, not the setup's node_modules):\n%s", files)
	}
}

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
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/cli"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

// fleetModel is one scripted server answering for every task's agent: it tells them apart by
// the pane their goal prompt names, and records what each was asked, in order.
type fleetModel struct {
	srv *llmtest.Server
	mu  sync.Mutex
	log []string                     // "pane:turn"
	req map[string][]llmtest.Request // by pane
}

var fleetPaneRe = regexp.MustCompile(`You are working in pane ([A-Za-z0-9_.-]+)\.`)

func newFleetModel(t *testing.T, agent func(pane string, turn int) llmtest.Reply) *fleetModel {
	m := &fleetModel{req: map[string][]llmtest.Request{}}
	compute := func(req llmtest.Request) llmtest.Reply {
		p := fleetPaneRe.FindStringSubmatch(string(req.Body))
		if p == nil {
			return llmtest.Text("no pane")
		}
		turn := 0
		msgs, _ := req.JSON["messages"].([]any)
		for _, x := range msgs {
			if mm, _ := x.(map[string]any); mm["role"] == "assistant" {
				turn++
			}
		}
		m.mu.Lock()
		m.log = append(m.log, p[1]+":"+strconv.Itoa(turn))
		m.req[p[1]] = append(m.req[p[1]], req)
		m.mu.Unlock()
		return agent(p[1], turn)
	}
	m.srv = llmtest.New(t, llmtest.Script{Replies: []llmtest.Reply{{Compute: compute, Repeat: 1 << 30}}})
	return m
}

func (m *fleetModel) requests(pane string) []llmtest.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.req[pane])
}

func (m *fleetModel) order() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.log)
}

// fleetCmd is `clusterspace fleet run FILE` against the model, in a sandbox, with args added.
func fleetCmd(t *testing.T, m *fleetModel, yaml, sandbox, dataDir string, args ...string) *exec.Cmd {
	t.Helper()
	file := filepath.Join(t.TempDir(), "fleet.yaml")
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	base := []string{"fleet", "run", file, "--base-url", m.srv.OpenAIURL(), "--model", "scripted", "--sandbox", sandbox,
		"--data-dir", dataDir, "--approve", "deny", "--critic-every", "0"}
	cmd := exec.Command(testBinary(t), append(base, args...)...)
	cmd.Dir = sandbox
	return cmd
}

func fleetClaim(rationale string) llmtest.Reply {
	return toolCall("claim_complete", map[string]string{"rationale": rationale})
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
	if _, err := os.Stat(filepath.Join(sandbox, "dist", "app")); err != nil {
		t.Errorf("the build's terminal did not work in the sandbox: %v", err)
	}
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
	deadline := time.Now().Add(15 * time.Second)
	for len(m.requests("b-term")) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("task b never asked the model")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cmd.Process.Kill() // SIGKILL
	cmd.Wait()
	asked := len(m.requests("a-term"))

	stall.Store(false)
	code, out, errs := runToEnd(t, exec.Command(testBinary(t), "fleet", "resume", fleetID, "--base-url", m.srv.OpenAIURL(), "--model", "scripted",
		"--data-dir", dataDir, "--approve", "deny"))
	if code != cli.ExitOK {
		t.Fatalf("resume: exit %d\n%s\n%s", code, out, errs)
	}
	if n := len(m.requests("a-term")); n != asked {
		t.Fatalf("the verified task a asked the model again (%d → %d)", asked, n)
	}
	show, err := exec.Command(testBinary(t), "fleet", "show", fleetID, "--json", "--data-dir", dataDir).Output()
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Status string
		Tasks  []struct{ ID, Status, GoalID string }
	}
	json.Unmarshal(show, &f)
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
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"commit", "-q", "--allow-empty", "-m", "base"}} {
		c := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-C", sandbox}, args...)...)
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
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

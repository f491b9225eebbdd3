package tools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/terminal"
	"github.com/clusterspace/clusterspace/backend/terminal/terminaltest"
	"github.com/clusterspace/clusterspace/backend/tools"
)

// terminalTools is a registry with the terminal tools over a real manager and one real bash
// pane, ready at its prompt.
func terminalTools(t *testing.T) (*tools.Registry, *terminal.Manager, string) {
	t.Helper()
	return terminalToolsWith(t, "/bin/bash")
}

// terminalRegistry is a registry of the terminal tools over a new terminal manager.
func terminalRegistry(t *testing.T, opts terminal.Options) (*tools.Registry, *terminal.Manager) {
	m := terminal.NewManager(opts)
	t.Cleanup(m.Shutdown)
	r := tools.NewRegistry()
	tools.RegisterTerminal(r, m)
	return r, m
}

// terminalToolsWith is terminalTools with another shell.
func terminalToolsWith(t *testing.T, shell string) (*tools.Registry, *terminal.Manager, string) {
	t.Helper()
	r, m := terminalRegistry(t, terminal.Options{})
	dir := t.TempDir()
	pane := "pane-" + strconv.FormatInt(time.Now().UnixNano()%1e12, 16)
	if _, err := m.Open(context.Background(), terminal.Spec{PaneID: pane, Shell: shell, Dir: dir, Env: []string{"HOME=" + dir}}); err != nil {
		t.Fatal(err)
	}
	if c, err := m.WaitForCompletion(context.Background(), pane, "", terminal.WaitOptions{Since: -1, Prompt: true, Timeout: 10 * time.Second}); err != nil || c.Reason != terminal.CompletedPrompt {
		t.Fatalf("no first prompt: %+v %v", c, err)
	}
	return r, m, pane
}

func call(t *testing.T, r *tools.Registry, name string, args map[string]any) tools.Result {
	t.Helper()
	tool, ok := r.Get(name)
	if !ok {
		t.Fatalf("no tool %s", name)
	}
	b, _ := json.Marshal(args)
	res, err := tool.Run(context.Background(), tools.Call{Name: name, Args: b})
	if err != nil {
		t.Fatalf("%s(%s): %v", name, b, err)
	}
	return res
}

func mustContain(t *testing.T, res tools.Result, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(res.Text, w) {
			t.Fatalf("result lacks %q:\n%s", w, res.Text)
		}
	}
}

func TestTerminalToolsDeclareRiskAndSchema(t *testing.T) {
	t.Parallel()
	r := tools.NewRegistry()
	tools.RegisterTerminal(r, terminal.NewManager(terminal.Options{}))
	want := map[string]tools.Risk{"write_to_terminal": tools.WriteLocal, "read_terminal_output": tools.ReadOnly,
		"poll_terminal_status": tools.ReadOnly, "wait_for_output": tools.ReadOnly}
	for _, d := range r.Definitions() {
		if risk, ok := want[d.Name]; !ok || risk != d.Risk {
			t.Errorf("%s: risk %v", d.Name, d.Risk)
		}
		delete(want, d.Name)
	}
	if len(want) != 0 {
		t.Fatalf("missing tools %v", want)
	}
	var s struct {
		Properties map[string]struct {
			Default any      `json:"default"`
			Enum    []string `json:"enum"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	tool, _ := r.Get("write_to_terminal")
	json.Unmarshal(tool.Schema(), &s)
	if fmt.Sprint(s.Required) != "[pane_id text]" || s.Properties["press_enter"].Default != true ||
		s.Properties["wait_timeout_ms"].Default != float64(3000) || fmt.Sprint(s.Properties["terminal_type"].Enum) != "[shell interactive]" {
		t.Fatalf("write_to_terminal schema: %s", tool.Schema())
	}
}

// Not parallel: the timeout case relies on a shell printing every 50 ms, which other tests'
// shells competing for two cores could delay past the 300 ms stability window.
func TestTerminalToolsEndToEnd(t *testing.T) {
	r, _, pane := terminalTools(t)

	res := call(t, r, "write_to_terminal", map[string]any{"pane_id": pane, "text": `printf '\033[1;31mred-%s\033[0m\n' $((6*7))`})
	mustContain(t, res, "Completion: prompt", "red-42")
	if res.IsError || strings.Contains(res.Text, "\x1b") {
		t.Fatalf("the model must see plain text:\n%q", res.Text)
	}

	// A command that keeps running: the wait ends on stability, the status says busy, a key stops it.
	res = call(t, r, "write_to_terminal", map[string]any{"pane_id": pane, "text": "sleep 30", "wait_timeout_ms": 2000})
	mustContain(t, res, "Completion: stable")
	mustContain(t, call(t, r, "poll_terminal_status", map[string]any{"pane_id": pane}), "State: busy: sleep is running")
	res = call(t, r, "write_to_terminal", map[string]any{"pane_id": pane, "text": "ctrl+c"})
	mustContain(t, res, "Sent key ctrl+c", "Completion: prompt")
	mustContain(t, call(t, r, "poll_terminal_status", map[string]any{"pane_id": pane}), "State: idle")

	// Output that never settles runs into the timeout.
	res = call(t, r, "write_to_terminal", map[string]any{"pane_id": pane, "text": "while :; do echo tick; read -t 0.05 -u 9; done 9< <(sleep 60)", "wait_timeout_ms": 800})
	mustContain(t, res, "Completion: timeout", "tick")
	call(t, r, "write_to_terminal", map[string]any{"pane_id": pane, "text": "ctrl+c"})

	// wait_for_output: by pattern, then by prompt.
	call(t, r, "write_to_terminal", map[string]any{"pane_id": pane, "text": "sleep 0.5; echo ready-$((2+3)); sleep 0.5", "wait_timeout_ms": 0})
	res = call(t, r, "wait_for_output", map[string]any{"pane_id": pane, "until_pattern": `ready-\d`, "timeout_ms": 5000})
	mustContain(t, res, `Completion: pattern (matched "ready-5")`)
	res = call(t, r, "wait_for_output", map[string]any{"pane_id": pane, "timeout_ms": 5000})
	mustContain(t, res, "Completion: prompt")

	// Paged reads with a cursor cover the output exactly once, in order.
	st := call(t, r, "poll_terminal_status", map[string]any{"pane_id": pane})
	cursor := regexp.MustCompile(`Cursor: (\d+)`).FindStringSubmatch(st.Text)[1]
	call(t, r, "write_to_terminal", map[string]any{"pane_id": pane, "text": "seq 1 120"})
	var seen []string
	next, _ := strconv.Atoi(cursor)
	for page := 0; ; page++ {
		res = call(t, r, "read_terminal_output", map[string]any{"pane_id": pane, "cursor": next, "lines": 50})
		for _, line := range strings.Split(res.Text, "\n")[1:] {
			if _, err := strconv.Atoi(strings.TrimSpace(line)); err == nil {
				seen = append(seen, strings.TrimSpace(line))
			}
		}
		m := regexp.MustCompile(`call again with cursor (\d+)`).FindStringSubmatch(res.Text)
		if m == nil {
			break
		}
		next, _ = strconv.Atoi(m[1])
		if page > 10 {
			t.Fatal("paging does not end")
		}
	}
	if len(seen) != 120 || seen[0] != "1" || seen[119] != "120" {
		t.Fatalf("paged reads saw %d numbers: %v", len(seen), seen)
	}
	res = call(t, r, "read_terminal_output", map[string]any{"pane_id": pane, "lines": 5})
	mustContain(t, res, "Last 5 lines", "120")
	if strings.Contains(res.Text, "\n115\n") {
		t.Fatalf("5 lines showed too much:\n%s", res.Text)
	}
}

func TestTerminalToolsTellTheModelWhatToDo(t *testing.T) {
	t.Parallel()
	r, _, pane := terminalTools(t)
	for _, tc := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"write_to_terminal", map[string]any{"pane_id": "pane-nope", "text": "ls"}, `Pane "pane-nope" has no terminal`},
		{"read_terminal_output", map[string]any{"pane_id": pane, "tab_id": "tab-999"}, "leave tab_id out"},
		{"write_to_terminal", map[string]any{"pane_id": pane, "text": "ls", "wait_timeout_ms": 200000}, "use 0-120000"},
		{"write_to_terminal", map[string]any{"pane_id": pane, "text": "ls", "terminal_type": "gui"}, "not one of shell, interactive"},
		{"read_terminal_output", map[string]any{"pane_id": pane, "lines": 501}, "use 1-500"},
		{"wait_for_output", map[string]any{"pane_id": pane, "until_pattern": "(unclosed"}, "not a valid regular expression"},
		{"poll_terminal_status", map[string]any{}, "missing required argument(s): pane_id"},
	} {
		res := call(t, r, tc.name, tc.args)
		if !res.IsError || !strings.Contains(res.Text, tc.want) {
			t.Errorf("%s %v: %+v, want an error containing %q", tc.name, tc.args, res, tc.want)
		}
	}

	res := call(t, r, "write_to_terminal", map[string]any{"pane_id": pane, "text": "exit 7"})
	mustContain(t, res, "Completion: exited", "code 7", "restart the pane")
	for name, args := range map[string]map[string]any{
		"write_to_terminal": {"pane_id": pane, "text": "ls"},
		"wait_for_output":   {"pane_id": pane},
	} {
		res = call(t, r, name, args)
		if !res.IsError || !strings.Contains(res.Text, "exited with code 7: restart the pane") {
			t.Errorf("%s on an exited shell: %+v", name, res)
		}
	}
	mustContain(t, call(t, r, "poll_terminal_status", map[string]any{"pane_id": pane}), "State: The shell in this pane has exited with code 7")
	mustContain(t, call(t, r, "read_terminal_output", map[string]any{"pane_id": pane}), "[process exited with code 7]", "restart the pane")
}

// The echo of a typed command line is not its output: wait_for_output waits for what the
// command prints, even when the pattern also occurs in the command. Real shells: bash, whose
// readline echoes each line as it reads it, and sh (dash), whose echo is the kernel's.
// Only lower bounds on time are asserted (the sleeps), so a loaded machine cannot fail them.
func TestWaitForOutputWaitsForTheCommandNotItsEcho(t *testing.T) {
	t.Parallel()
	for _, shell := range []string{"/bin/bash", "/bin/sh"} {
		t.Run(filepath.Base(shell), func(t *testing.T) {
			t.Parallel()
			r, _, pane := terminalToolsWith(t, shell)
			write := func(args map[string]any) {
				t.Helper()
				args["pane_id"] = pane
				if res := call(t, r, "write_to_terminal", args); res.IsError {
					t.Fatalf("write %v: %s", args, res.Text)
				}
			}
			// waitFor waits for pattern and checks it matched on an output line ending with
			// want (sh prints its prompt before the next command's output, on the same line),
			// not on the command line, and no sooner than atLeast after start.
			waitFor := func(pattern, want string, start time.Time, atLeast time.Duration) {
				t.Helper()
				res := call(t, r, "wait_for_output", map[string]any{"pane_id": pane, "until_pattern": pattern, "timeout_ms": 20000})
				if took := time.Since(start); took < atLeast {
					t.Fatalf("%q matched after %v, before the command printed it (it sleeps %v):\n%s", pattern, took, atLeast, res.Text)
				}
				mustContain(t, res, "Completion: pattern")
				m := regexp.MustCompile(`Matched line: (".*")`).FindStringSubmatch(res.Text)
				line, err := strconv.Unquote(m[1])
				if err != nil || !strings.HasSuffix(line, want) || strings.Contains(line, "echo") {
					t.Fatalf("matched on %q, want an output line ending with %q:\n%s", m[1], want, res.Text)
				}
			}
			atPrompt := func() {
				t.Helper()
				mustContain(t, call(t, r, "wait_for_output", map[string]any{"pane_id": pane, "timeout_ms": 20000}), "Completion: prompt")
			}

			// The pattern is in the command line: the echo shows DONE at once, the command 1.5 s later.
			start := time.Now()
			write(map[string]any{"text": "sleep 1.5; echo DONE", "wait_timeout_ms": 0})
			waitFor("DONE", "DONE", start, 1400*time.Millisecond)
			atPrompt()

			// Typed without Enter, nothing runs: the echo alone does not match. Enter runs it.
			write(map[string]any{"text": "sleep 1.5; echo LATER", "press_enter": false})
			mustContain(t, call(t, r, "wait_for_output", map[string]any{"pane_id": pane, "until_pattern": "LATER", "timeout_ms": 1000}),
				"Completion: timeout")
			start = time.Now()
			write(map[string]any{"text": "enter", "wait_timeout_ms": 0})
			waitFor("LATER", "LATER", start, 1400*time.Millisecond)
			atPrompt()

			// A pattern only the output has matches while the command still runs.
			start = time.Now()
			write(map[string]any{"text": "echo ready-$((40+2)); sleep 30", "wait_timeout_ms": 0})
			waitFor(`ready-\d+`, "ready-42", start, 0)
			if took := time.Since(start); took > 20*time.Second {
				t.Fatalf("ready-42 matched only after %v", took)
			}
			// Interrupt it once sleep is the foreground job: a SIGINT sent in the moment
			// between the shell forking sleep and handing it the terminal is lost (the shell
			// then waits the full 30 s), which is the shell's race, not this test's subject.
			for deadline := time.Now().Add(10 * time.Second); ; {
				if st := call(t, r, "poll_terminal_status", map[string]any{"pane_id": pane}); strings.Contains(st.Text, "busy: sleep") {
					break
				} else if time.Now().After(deadline) {
					t.Fatalf("sleep never became the foreground job:\n%s", st.Text)
				}
				time.Sleep(50 * time.Millisecond)
			}
			write(map[string]any{"text": "ctrl+c"})
			atPrompt()

			// A command line longer than two rows of the 80-column pane wraps; its tail, which
			// holds the pattern, is still the echo.
			long := "sleep 1.5; echo " + strings.Repeat("w", 170) + " WRAPDONE"
			start = time.Now()
			write(map[string]any{"text": long, "wait_timeout_ms": 0})
			waitFor(`w+ WRAPDONE`, strings.Repeat("w", 170)+" WRAPDONE", start, 1400*time.Millisecond)
			atPrompt()

			// Several lines at once: bash echoes the second only when it reads it, after the
			// first has run; sh echoes both at once. Neither echo is output.
			start = time.Now()
			write(map[string]any{"text": "sleep 1; echo ONE\nsleep 1; echo TWO", "wait_timeout_ms": 0})
			waitFor("TWO", "TWO", start, 1900*time.Millisecond)
			atPrompt()

			// An interactive program that reads a line with its own prompt (the kernel echoes it).
			write(map[string]any{"text": `while read -r -p 'calc> ' l; do sleep 1; echo "= $l"; done`})
			start = time.Now()
			write(map[string]any{"text": "DONE", "wait_timeout_ms": 0})
			waitFor("DONE", "= DONE", start, 900*time.Millisecond)
			write(map[string]any{"text": "ctrl+c"})
			atPrompt()
		})
	}
}

// With several lines typed at once, write_to_terminal waits for the last one's prompt, not
// the first's.
func TestWriteToTerminalWaitsForTheLastLine(t *testing.T) {
	t.Parallel()
	r, _, pane := terminalTools(t)
	res := call(t, r, "write_to_terminal", map[string]any{"pane_id": pane, "text": "echo one-$((0+1))\necho two-$((1+1))\necho three-$((1+2))"})
	mustContain(t, res, "Completion: prompt", "one-1", "two-2", "three-3")
}

// The first command typed into a shell still starting (a slow rc file) waits for its first
// prompt: typed earlier, it is echoed before the prompt, and that prompt read as "done"
// before the command ran (a goal then claimed, and its check found nothing).
func TestWriteToTerminalWaitsForANewShellsFirstPrompt(t *testing.T) {
	t.Parallel()
	r, m := terminalRegistry(t, terminal.Options{})
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".bashrc"), []byte("sleep 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Open(context.Background(), terminal.Spec{PaneID: "slow", Shell: "/bin/bash", Dir: dir, Env: []string{"HOME=" + dir}}); err != nil {
		t.Fatal(err)
	}
	res := call(t, r, "write_to_terminal", map[string]any{"pane_id": "slow", "text": "touch ready.txt"})
	mustContain(t, res, "Completion: prompt")
	if _, err := os.Stat(filepath.Join(dir, "ready.txt")); err != nil {
		t.Fatalf("write_to_terminal said the command was done, but it had not run: %v\n%s", err, res.Text)
	}
}

// The terminal tools on a pane showing the real Claude Code's screen, replayed from its
// recording (backend/terminal/testdata/agents): the answer Claude Code drew and then
// overwrote parts of around it is read as the screen shows it, a pattern on it matches, and
// poll_terminal_status says Claude Code finished its turn.
func TestTerminalToolsReadARecordedClaudeCodeScreen(t *testing.T) {
	var rec struct {
		Cols, Rows  int
		Answer      string
		Checkpoints []struct {
			Offset int64
			State  string
		}
	}
	b, err := os.ReadFile("../terminal/testdata/agents/claude.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("../terminal/testdata/agents/claude.raw")
	if err != nil {
		t.Fatal(err)
	}
	var end int64
	for _, cp := range rec.Checkpoints {
		if cp.State == string(terminal.AgentFinished) {
			end = cp.Offset
		}
	}
	dir := t.TempDir()
	feed := filepath.Join(dir, "screen.raw")
	if err := os.WriteFile(feed, raw[:end], 0o600); err != nil {
		t.Fatal(err)
	}
	r, m := terminalRegistry(t, terminal.Options{})
	const pane = "pane-c1a0de0000f1"
	if _, err := m.Open(context.Background(), terminal.Spec{PaneID: pane, Dir: dir, Cols: rec.Cols, Rows: rec.Rows, Agent: "claude",
		Command: []string{"sh", "-c", "stty -echo -opost; cat " + feed + "; exec sleep 60"}}); err != nil {
		t.Fatal(err)
	}
	// The replay is done when its output has rested.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		st, err := m.Status(pane, "")
		if err != nil {
			t.Fatal(err)
		}
		if st.Cursor >= end && time.Since(st.LastOutput) > time.Second {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the replay did not finish: %d of %d bytes", st.Cursor, end)
		}
	}
	mustContain(t, call(t, r, "read_terminal_output", map[string]any{"pane_id": pane, "lines": 20}), rec.Answer, "● Write(answer.txt)")
	mustContain(t, call(t, r, "wait_for_output", map[string]any{"pane_id": pane, "until_pattern": `CC-FINISHED: the file is \w+\.`, "timeout_ms": 5000}),
		`Completion: pattern (matched "CC-FINISHED: the file is written.")`)
	mustContain(t, call(t, r, "poll_terminal_status", map[string]any{"pane_id": pane}),
		"State: claude finished its turn and waits at its prompt", "Agent: claude finished")
	mustContain(t, call(t, r, "wait_for_output", map[string]any{"pane_id": pane, "timeout_ms": 10000}), "Completion: prompt")
}

// TestTerminalToolsInAnSSHPane drives a pane logged in to a real sshd (inside the pane's
// remote tmux session) with the agent's terminal tools: commands run there, their output and
// the remote prompt are seen, and a wait by pattern works across the connection.
func TestTerminalToolsInAnSSHPane(t *testing.T) {
	known := filepath.Join(t.TempDir(), "known_hosts")
	if err := sshd.KnownHosts(known); err != nil {
		t.Fatal(err)
	}
	r, m := terminalRegistry(t, terminal.Options{SSHOptions: terminaltest.ClientOptions(known)})
	target := terminal.SSHTarget{Host: sshd.Host, Port: sshd.Port, User: sshd.User, KeyPath: sshd.KeyPath}
	const pane = "pane-55aa00000001"
	if _, err := m.Open(context.Background(), terminal.Spec{PaneID: pane, Dir: t.TempDir(), SSH: &target}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Best effort: the test user and its tmux server go when the package's tests end.
		m.KillRemoteSession(context.Background(), target, terminal.TmuxSessionName(pane))
	})

	// The tool waits for the remote shell's first prompt before it types.
	res := call(t, r, "write_to_terminal", map[string]any{"pane_id": pane, "text": `echo "on=$(whoami) sum=$((6*7))"`})
	mustContain(t, res, "Completion: prompt", "on="+sshd.User+" sum=42")

	call(t, r, "write_to_terminal", map[string]any{"pane_id": pane, "text": "sleep 0.5; echo remote-ready-$((2+3)); sleep 0.5", "wait_timeout_ms": 0})
	res = call(t, r, "wait_for_output", map[string]any{"pane_id": pane, "until_pattern": `remote-ready-\d`, "timeout_ms": 5000})
	mustContain(t, res, `Completion: pattern (matched "remote-ready-5")`)
	res = call(t, r, "wait_for_output", map[string]any{"pane_id": pane, "timeout_ms": 5000})
	mustContain(t, res, "Completion: prompt")

	res = call(t, r, "write_to_terminal", map[string]any{"pane_id": pane, "text": "printf 'line-%s\\n' 1 2 3 4 5"})
	mustContain(t, res, "Completion: prompt", "line-5")
	res = call(t, r, "read_terminal_output", map[string]any{"pane_id": pane, "lines": 10})
	mustContain(t, res, "line-3", "line-4")
	mustContain(t, call(t, r, "poll_terminal_status", map[string]any{"pane_id": pane}), "State: idle")
}

package agent

import (
	"encoding/json"
	"strings"
	"testing"
)

// recordedCall is one terminal tool call and its result, as the tools returned it.
type recordedCall struct{ tool, args, result string }

// terminalSession was recorded by running the real terminal tools (tools.RegisterTerminal over
// a terminal.Manager) on one bash pane, in this order: `echo a` three times, `echo b`,
// `echo $((n+=1))` three times, a loop printing a step every 0.4 s, and three waits on it.
// Each write's screen still shows every command before it.
var terminalSession = []recordedCall{
	{"write_to_terminal", `{"pane_id":"term-1","text":"echo a"}`,
		"Sent 6 characters + Enter to term-1.\nCompletion: prompt\nCursor: 58\n--- last 30 lines ---\nroot@vm:~# echo a\na\nroot@vm:~# "},
	{"write_to_terminal", `{"pane_id":"term-1","text":"echo a"}`,
		"Sent 6 characters + Enter to term-1.\nCompletion: prompt\nCursor: 97\n--- last 30 lines ---\nroot@vm:~# echo a\na\nroot@vm:~# echo a\na\nroot@vm:~# "},
	{"write_to_terminal", `{"pane_id":"term-1","text":"echo a"}`,
		"Sent 6 characters + Enter to term-1.\nCompletion: prompt\nCursor: 136\n--- last 30 lines ---\nroot@vm:~# echo a\na\nroot@vm:~# echo a\na\nroot@vm:~# echo a\na\nroot@vm:~# "},
	{"write_to_terminal", `{"pane_id":"term-1","text":"echo b"}`,
		"Sent 6 characters + Enter to term-1.\nCompletion: prompt\nCursor: 175\n--- last 30 lines ---\nroot@vm:~# echo a\na\nroot@vm:~# echo a\na\nroot@vm:~# echo a\na\nroot@vm:~# echo b\nb\nroot@vm:~# "},
	{"write_to_terminal", `{"pane_id":"term-1","text":"echo $((n+=1))"}`,
		"Sent 14 characters + Enter to term-1.\nCompletion: prompt\nCursor: 222\n--- last 30 lines ---\nroot@vm:~# echo a\na\nroot@vm:~# echo a\na\nroot@vm:~# echo a\na\nroot@vm:~# echo b\nb\nroot@vm:~# echo $((n+=1))\n1\nroot@vm:~# "},
	{"write_to_terminal", `{"pane_id":"term-1","text":"echo $((n+=1))"}`,
		"Sent 14 characters + Enter to term-1.\nCompletion: prompt\nCursor: 269\n--- last 30 lines ---\nroot@vm:~# echo a\na\nroot@vm:~# echo a\na\nroot@vm:~# echo a\na\nroot@vm:~# echo b\nb\nroot@vm:~# echo $((n+=1))\n1\nroot@vm:~# echo $((n+=1))\n2\nroot@vm:~# "},
	{"write_to_terminal", `{"pane_id":"term-1","text":"echo $((n+=1))"}`,
		"Sent 14 characters + Enter to term-1.\nCompletion: prompt\nCursor: 316\n--- last 30 lines ---\nroot@vm:~# echo a\na\nroot@vm:~# echo a\na\nroot@vm:~# echo a\na\nroot@vm:~# echo b\nb\nroot@vm:~# echo $((n+=1))\n1\nroot@vm:~# echo $((n+=1))\n2\nroot@vm:~# echo $((n+=1))\n3\nroot@vm:~# "},
	{"write_to_terminal", `{"pane_id":"term-1","text":"for i in 1 2 3 4 5 6; do echo step $i; sleep 0.4; done","wait_timeout_ms":500}`,
		"Sent 54 characters + Enter to term-1.\nCompletion: stable\nCursor: 389\n--- last 30 lines ---\nroot@vm:~# echo a\na\nroot@vm:~# echo a\na\nroot@vm:~# echo a\na\nroot@vm:~# echo b\nb\nroot@vm:~# echo $((n+=1))\n1\nroot@vm:~# echo $((n+=1))\n2\nroot@vm:~# echo $((n+=1))\n3\nroot@vm:~# for i in 1 2 3 4 5 6; do echo step $i; sleep 0.4; done\nstep 1"},
	{"wait_for_output", `{"pane_id":"term-1","timeout_ms":500}`,
		"Waited on term-1.\nCompletion: timeout\nCursor: 397\n--- last 30 lines ---\nroot@vm:~# echo a\na\nroot@vm:~# echo a\na\nroot@vm:~# echo a\na\nroot@vm:~# echo b\nb\nroot@vm:~# echo $((n+=1))\n1\nroot@vm:~# echo $((n+=1))\n2\nroot@vm:~# echo $((n+=1))\n3\nroot@vm:~# for i in 1 2 3 4 5 6; do echo step $i; sleep 0.4; done\nstep 1\nstep 2"},
	{"wait_for_output", `{"pane_id":"term-1","timeout_ms":500}`,
		"Waited on term-1.\nCompletion: timeout\nCursor: 413\n--- last 30 lines ---\nroot@vm:~# echo a\na\nroot@vm:~# echo a\na\nroot@vm:~# echo a\na\nroot@vm:~# echo b\nb\nroot@vm:~# echo $((n+=1))\n1\nroot@vm:~# echo $((n+=1))\n2\nroot@vm:~# echo $((n+=1))\n3\nroot@vm:~# for i in 1 2 3 4 5 6; do echo step $i; sleep 0.4; done\nstep 1\nstep 2\nstep 3\nstep 4"},
	{"wait_for_output", `{"pane_id":"term-1","timeout_ms":500}`,
		"Waited on term-1.\nCompletion: timeout\nCursor: 421\n--- last 30 lines ---\nroot@vm:~# echo a\na\nroot@vm:~# echo a\na\nroot@vm:~# echo a\na\nroot@vm:~# echo b\nb\nroot@vm:~# echo $((n+=1))\n1\nroot@vm:~# echo $((n+=1))\n2\nroot@vm:~# echo $((n+=1))\n3\nroot@vm:~# for i in 1 2 3 4 5 6; do echo step $i; sleep 0.4; done\nstep 1\nstep 2\nstep 3\nstep 4\nstep 5"},
}

// Other results recorded the same way. In one pane: `echo a`, a line wider than the pane, a
// heredoc, the key up, ctrl+c, `echo a` without Enter.
var (
	wideLine  = "echo " + strings.Repeat("x", 120) // wider than the 80-column pane
	wideShown = "root@vm:~# echo a\na\nroot@vm:~# " + wideLine + "\n" + strings.Repeat("x", 120) + "\nroot@vm:~# "
	typedWide = "Sent 125 characters + Enter to term-1.\nCompletion: prompt\nCursor: 335\n--- last 30 lines ---\n" + wideShown
	// Its later lines echo after "> ".
	heredocShown = wideShown + "cat <<EOF\n> hello\n> EOF\nhello\nroot@vm:~# "
	typedHeredoc = "Sent 19 characters + Enter to term-1.\nCompletion: prompt\nCursor: 431\n--- last 30 lines ---\n" + heredocShown
	// The shell recalls the heredoc.
	pressedUp = "Sent key up to term-1.\nCompletion: stable\nCursor: 457\n--- last 30 lines ---\n" + heredocShown + "cat <<EOF\nhello\nEOF"
	// The text stands on the prompt line; nothing ran.
	typedNoEnter = "Sent 6 characters to term-1.\nCompletion: stable\nCursor: 512\n--- last 30 lines ---\n" + heredocShown +
		"cat <<EOF\nhello\nEOF\n^C\nroot@vm:~# echo a"
)

// Recorded each in a fresh pane.
var (
	// `echo one`, `echo two`, `echo one` typed at once, after `echo one`.
	typedSeveral = "Sent 26 characters + Enter to term-1.\nCompletion: prompt\nCursor: 191\n--- last 30 lines ---\nroot@vm:~# echo one\none\n" +
		"root@vm:~# echo one\none\nroot@vm:~# echo two\ntwo\nroot@vm:~# echo one\none\nroot@vm:~# "
	// `history 1` twice: the output ends with the command too, after no prompt.
	typedHistory = "Sent 9 characters + Enter to term-1.\nCompletion: prompt\nCursor: 133\n--- last 30 lines ---\nroot@vm:~# history 1\n    1  history 1\nroot@vm:~# history 1\n    2  history 1\nroot@vm:~# "
	// `history 1` twice, then `seq 40`: more output than the 30 lines shown, so its echo is gone from them.
	typedLong = "Sent 6 characters + Enter to term-1.\nCompletion: prompt\nCursor: 320\n--- last 30 lines ---\n12\n13\n14\n15\n16\n17\n18\n19\n20\n21\n22\n23\n24\n25\n26\n27\n28\n29\n30\n31\n32\n33\n34\n35\n36\n37\n38\n39\n40\nroot@vm:~# "
	// `echo a`, then `exit`: bash prints "exit" itself, a line with no prompt before it.
	typedExit = "Sent 4 characters + Enter to term-1.\nCompletion: exited — The shell in this pane has exited with code 0: restart the pane (the user can press Ctrl+R) to use it again.\nCursor: 115\n--- last 30 lines ---\nroot@vm:~# echo a\na\nroot@vm:~# exit\nexit\n\n[process exited with code 0]"
	// Then `echo a` again, into the exited shell: an error result, with the last lines.
	exitedError = "The shell in this pane has exited with code 0: restart the pane (the user can press Ctrl+R) to use it again.\n--- last 30 lines ---\nroot@vm:~# echo a\na\nroot@vm:~# exit\nexit\n\n[process exited with code 0]"
)

func TestProducedResult(t *testing.T) {
	t.Parallel()
	const echo = `{"pane_id":"term-1","text":"echo a"}`
	cases := []struct {
		name, tool, args, result, want string
	}{
		{"the first command: its echo is the first line already", "write_to_terminal", echo, terminalSession[0].result,
			terminalSession[0].result},
		{"the third echo a: the screen is cut to its own echo", "write_to_terminal", echo, terminalSession[2].result,
			"Sent 6 characters + Enter to term-1.\nCompletion: prompt\nCursor: 136\n--- last 30 lines ---\nroot@vm:~# echo a\na\nroot@vm:~# "},
		{"echo b after echo a: its own output stays", "write_to_terminal", terminalSession[3].args, terminalSession[3].result,
			"Sent 6 characters + Enter to term-1.\nCompletion: prompt\nCursor: 175\n--- last 30 lines ---\nroot@vm:~# echo b\nb\nroot@vm:~# "},
		{"a command still running: what it printed so far", "write_to_terminal", terminalSession[7].args, terminalSession[7].result,
			"Sent 54 characters + Enter to term-1.\nCompletion: stable\nCursor: 389\n--- last 30 lines ---\nroot@vm:~# for i in 1 2 3 4 5 6; do echo step $i; sleep 0.4; done\nstep 1"},
		{"several lines typed: from the echo of the first, though it is typed again last", "write_to_terminal",
			`{"pane_id":"term-1","text":"echo one\necho two\necho one"}`, typedSeveral,
			"Sent 26 characters + Enter to term-1.\nCompletion: prompt\nCursor: 191\n--- last 30 lines ---\nroot@vm:~# echo one\none\nroot@vm:~# echo two\ntwo\nroot@vm:~# echo one\none\nroot@vm:~# "},
		{"a line wider than the pane is one line", "write_to_terminal", `{"pane_id":"term-1","text":"` + wideLine + `"}`, typedWide,
			"Sent 125 characters + Enter to term-1.\nCompletion: prompt\nCursor: 335\n--- last 30 lines ---\nroot@vm:~# " + wideLine + "\n" + strings.Repeat("x", 120) + "\nroot@vm:~# "},
		{"a heredoc", "write_to_terminal", `{"pane_id":"term-1","text":"cat <<EOF\nhello\nEOF"}`, typedHeredoc,
			"Sent 19 characters + Enter to term-1.\nCompletion: prompt\nCursor: 431\n--- last 30 lines ---\nroot@vm:~# cat <<EOF\n> hello\n> EOF\nhello\nroot@vm:~# "},
		{"an output line ending with the command is not its echo", "write_to_terminal", `{"pane_id":"term-1","text":"history 1"}`, typedHistory,
			"Sent 9 characters + Enter to term-1.\nCompletion: prompt\nCursor: 133\n--- last 30 lines ---\nroot@vm:~# history 1\n    2  history 1\nroot@vm:~# "},
		{"the shell's own exit line is not the echo of exit", "write_to_terminal", `{"pane_id":"term-1","text":"exit"}`, typedExit,
			"Sent 4 characters + Enter to term-1.\nCompletion: exited — The shell in this pane has exited with code 0: restart the pane (the user can press Ctrl+R) to use it again.\nCursor: 115\n--- last 30 lines ---\nroot@vm:~# exit\nexit\n\n[process exited with code 0]"},
		// Compared whole: nothing on these screens is known to be older than the call.
		{"the echo scrolled off: every line shown is output", "write_to_terminal", `{"pane_id":"term-1","text":"seq 40"}`, typedLong, typedLong},
		{"text without Enter ran nothing", "write_to_terminal", `{"pane_id":"term-1","text":"echo a","press_enter":false}`, typedNoEnter, typedNoEnter},
		{"a key", "write_to_terminal", `{"pane_id":"term-1","text":"up"}`, pressedUp, pressedUp},
		{"an interactive program redraws anywhere", "write_to_terminal", `{"pane_id":"term-1","text":"echo a","terminal_type":"interactive"}`,
			terminalSession[2].result, terminalSession[2].result},
		{"an exited shell's error", "write_to_terminal", echo, exitedError, exitedError},
		{"a wait: its screen moves only with new output", "wait_for_output", terminalSession[9].args, terminalSession[9].result, terminalSession[9].result},
		{"arguments that are not JSON", "write_to_terminal", `{"text":`, terminalSession[2].result, terminalSession[2].result},
		{"only blank lines typed", "write_to_terminal", `{"pane_id":"term-1","text":"  "}`, terminalSession[2].result, terminalSession[2].result},
	}
	for _, c := range cases {
		if got := producedResult(c.tool, json.RawMessage(c.args), c.result); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}

func TestFirstTypedLine(t *testing.T) {
	t.Parallel()
	cases := []struct {
		text  string
		first string
		times int
	}{
		{"echo a", "echo a", 1},
		{"echo a\n", "echo a", 1},
		{"\n  make \r\nmake test\rmake", "make", 2},
		{"", "", 0},
	}
	for _, c := range cases {
		if first, times := firstTypedLine(c.text); first != c.first || times != c.times {
			t.Errorf("%q: got %q ×%d, want %q ×%d", c.text, first, times, c.first, c.times)
		}
	}
}

// The guard over the recorded session: the model typing one command into one pane and
// getting the same output is a repeat, although the screen scrolled each time; the same
// command printing something new, and waits that show progress, are not.
func TestGuardRepeatOnScrollingScreen(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		calls []recordedCall
		next  recordedCall
		want  GuardAction
	}{
		{"echo a typed three times, then a fourth", terminalSession[0:3], terminalSession[0], GuardBlock},
		{"echo $((n+=1)) printing 1, 2, 3, then a fourth", terminalSession[4:7], terminalSession[4], GuardAllow},
		{"waits showing new steps, then another", terminalSession[8:11], terminalSession[8], GuardAllow},
	}
	for _, c := range cases {
		g := NewGuard()
		for _, r := range c.calls {
			call := GuardCall{Tool: r.tool, Args: json.RawMessage(r.args), Mutates: r.tool == writeTerminalTool}
			if d := g.Before(call); d.Action != GuardAllow {
				t.Fatalf("%s: blocked early: %+v", c.name, d)
			}
			g.After(call, r.result, false)
		}
		d := g.Before(GuardCall{Tool: c.next.tool, Args: json.RawMessage(c.next.args), Mutates: c.next.tool == writeTerminalTool})
		if d.Action != c.want || (c.want == GuardBlock && d.Rule != "repeat") {
			t.Errorf("%s: got %s/%s, want %s", c.name, d.Action, d.Rule, c.want)
		}
	}
	// echo b's output is not echo a's, on the same screen.
	a := NewGuardRecord(writeTerminalTool, json.RawMessage(terminalSession[2].args), terminalSession[2].result, false)
	b := NewGuardRecord(writeTerminalTool, json.RawMessage(terminalSession[3].args), terminalSession[3].result, false)
	if a.Result == b.Result {
		t.Error("echo a and echo b read as the same result")
	}
}

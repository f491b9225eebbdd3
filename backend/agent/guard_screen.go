package agent

import (
	"encoding/json"
	"strings"
	"unicode"

	"github.com/clusterspace/clusterspace/backend/terminal"
)

// writeTerminalTool is the terminal tool whose result shows the screen its own input scrolled
// (backend/tools/terminal.go).
const writeTerminalTool = "write_to_terminal"

// screenMarker opens the last lines of the screen in a terminal tool's result:
// "--- last 30 lines ---".
const screenMarker = "\n--- last "

// producedResult is the part of a call's result that the call produced, which is what the guard
// compares. It differs from the result only for a line typed with Enter into a shell
// (write_to_terminal): that result ends with the last lines of the screen, and each command
// typed scrolls the commands before it up into those lines, so typing `echo a` three times
// would read as three different results although each printed the same "a". There the screen
// is cut to the last echo of the input (a prompt followed by the first typed line) and what
// follows it: the command's output up to the next prompt. Everything else — keys, text without
// Enter, interactive programs, an echo that has scrolled off (then the whole screen is output),
// and the reads and waits, whose screen moves only when something new was printed — is
// compared whole, so progress never reads as a repeat.
func producedResult(tool string, args json.RawMessage, result string) string {
	if tool != writeTerminalTool {
		return result
	}
	var a struct {
		Text         string `json:"text"`
		TerminalType string `json:"terminal_type"`
	}
	// Only a line-oriented shell echoes the line after a prompt; a TUI redraws anywhere.
	if json.Unmarshal(args, &a) != nil || (a.TerminalType != "" && a.TerminalType != "shell") {
		return result
	}
	head, screen, ok := strings.Cut(result, screenMarker)
	// The result's first line says whether text went with Enter: "Sent 6 characters + Enter
	// to term-1." (a key is "Sent key up to term-1.").
	first, _, _ := strings.Cut(head, "\n")
	if !ok || !strings.HasPrefix(first, "Sent ") || !strings.Contains(first, " characters + Enter to ") {
		return result
	}
	marker, screen, ok := strings.Cut(screen, "\n")
	if !ok {
		return result
	}
	cmd, times := firstTypedLine(a.Text)
	if cmd == "" {
		return result
	}
	// The input's echo is the earliest of its own echoes of cmd: counting back from the end,
	// the one that makes as many as cmd was typed.
	lines := strings.Split(screen, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if isEcho(lines[i], cmd) {
			if times--; times == 0 {
				return head + screenMarker + marker + "\n" + strings.Join(lines[i:], "\n")
			}
		}
	}
	return result
}

// firstTypedLine is the first non-blank line of text as typed (Enter is CR or LF), and how
// many of the typed lines are that same line.
func firstTypedLine(text string) (string, int) {
	text = strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\r", "\n")
	var first string
	n := 0
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if first == "" {
			first = l
		}
		if l != "" && l == first {
			n++
		}
	}
	return first, n
}

// isEcho reports whether line is a shell's echo of cmd: cmd after something the terminal
// itself takes for a prompt. An output line that merely ends with the command ("    2
// history 1") is not one, so it cannot cut off the output before it.
func isEcho(line, cmd string) bool {
	line = strings.TrimRightFunc(line, unicode.IsSpace)
	prefix, ok := strings.CutSuffix(line, cmd)
	return ok && terminal.LooksLikePrompt(prefix)
}

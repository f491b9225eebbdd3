package tools

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/clusterspace/clusterspace/backend/terminal"
)

// TerminalDriver is what the terminal tools need from the terminal panes; *terminal.Manager
// implements it. tabID "" means the pane's active tab throughout.
type TerminalDriver interface {
	Write(paneID, tabID string, data []byte) error
	Status(paneID, tabID string) (terminal.Status, error)
	Tail(paneID, tabID string, lines int) (string, error)
	ReadPage(paneID, tabID string, cursor int64, lines int) (terminal.Page, error)
	WaitForCompletion(ctx context.Context, paneID, tabID string, w terminal.WaitOptions) (terminal.Completion, error)
	// OutsideBoundary says why a caller confined to sandbox reaching the tab leaves its
	// boundary ("" when it does not).
	OutsideBoundary(sandbox, paneID, tabID string) string
}

var _ TerminalDriver = (*terminal.Manager)(nil)

// Limits and defaults of the terminal tools, as the model is told them.
const (
	defaultWriteWaitMS = 3000
	maxWriteWaitMS     = 120_000
	// keyWaitMS bounds the wait after a key or text sent without Enter: enough to see what it
	// did, not a wait for a command to finish.
	keyWaitMS          = 1000
	defaultReadLines   = 50
	maxReadLines       = 500
	defaultWaitMS      = 30_000
	maxWaitMS          = 600_000 // ten minutes: long builds; past that, poll instead
	resultLines        = 30      // lines shown after writing or waiting
	statusLines        = 10      // lines shown by poll_terminal_status
	terminalTypeShell  = "shell"
	terminalTypeInterp = "interactive"
	// firstPromptWait bounds how long the first input to a new shell waits for its first
	// prompt. Text typed earlier is echoed before the prompt and then read (or dropped) by the
	// shell's line editor, and the prompt that follows the echo reads as "done" before the
	// command has even started; a shell's start-up takes well under a second, even loaded.
	firstPromptWait = 5 * time.Second
)

type writeTerminalParams struct {
	PaneID        string `json:"pane_id" desc:"Id of the terminal pane to type into."`
	TabID         string `json:"tab_id,omitempty" desc:"Tab of that pane; default the pane's active tab."`
	Text          string `json:"text" desc:"What to type. If it is exactly a key name (enter, esc, tab, backspace, space, up, down, left, right, home, end, pageup, pagedown, delete, insert, f1-f12, shift+tab, ctrl+<key>, alt+<key>) that key is pressed, without Enter."`
	PressEnter    *bool  `json:"press_enter,omitempty" default:"true" desc:"Press Enter after the text (ignored for key names)."`
	WaitTimeoutMS *int   `json:"wait_timeout_ms,omitempty" default:"3000" desc:"After Enter, wait at most this long (0-120000 ms) for the command to complete."`
	TerminalType  string `json:"terminal_type,omitempty" enum:"shell|interactive" default:"shell" desc:"shell: completion is a prompt at the end of the output or output unchanged for 300 ms; interactive (an editor, a pager, a TUI): only the output settling counts."`
}

// terminalTab is the terminal a reading tool reads: a pane, and one of its tabs.
type terminalTab struct {
	PaneID string `json:"pane_id" desc:"Id of the terminal pane."`
	TabID  string `json:"tab_id,omitempty" desc:"Tab of that pane; default the pane's active tab."`
}

type readTerminalParams struct {
	terminalTab
	Lines  *int   `json:"lines,omitempty" default:"50" desc:"How many lines to return (1-500)."`
	Cursor *int64 `json:"cursor,omitempty" desc:"Byte offset to read forward from, as returned by an earlier call (0 = the oldest output kept). Without it, the last lines are returned."`
}

type pollTerminalParams struct {
	terminalTab
}

type waitOutputParams struct {
	terminalTab
	TimeoutMS    *int   `json:"timeout_ms,omitempty" default:"30000" desc:"Wait at most this long (1-600000 ms)."`
	UntilPattern string `json:"until_pattern,omitempty" desc:"Regular expression (RE2) to wait for in the output since the last input sent to the terminal. The echo of the typed command line does not count, so a pattern that also occurs in the command waits for the command's own output. Without it, wait until a prompt shows (the command finished)."`
}

// RegisterTerminal adds the terminal tools, driving the terminals through term.
func RegisterTerminal(r *Registry, term TerminalDriver) {
	// Every terminal tool reaches one tab: a confined goal only the ones inside its boundary.
	tools := []Tool{
		New("write_to_terminal", "Type into a terminal pane as a person would, then show the last lines. "+
			"With Enter it waits for the command (with several lines, the last) to complete: a prompt at the end of the output, output unchanged for 300 ms, "+
			"or the timeout, and says which (Completion: prompt|stable|timeout). 'stable' or 'timeout' can mean the command is still running: "+
			"check with poll_terminal_status or wait_for_output. Send key names such as ctrl+c or q to interrupt or quit programs.",
			WriteLocal, onTerminal(term, writeToTerminal)),
		New("read_terminal_output", "Read a terminal pane as text. "+
			"Without cursor: the last lines of what its screen shows (as a person sees it, programs that redraw in place included) "+
			"and of the lines that scrolled off above it, and the cursor at the end of the output. "+
			"With cursor: the output from that byte offset on, as printed (escape sequences removed), and the cursor to pass next to page forward.",
			ReadOnly, onTerminal(term, readTerminal)).Parallel(),
		New("poll_terminal_status", "Check a terminal pane without waiting: whether a command is running or the shell waits at a prompt, "+
			"how long since the last output, and the last lines. For a coding agent CLI (Claude Code, Codex, Aider) its state: "+
			"working, idle (at its prompt), asking (a question or a permission) or finished (its turn done, or it exited).",
			ReadOnly, onTerminal(term, pollTerminal)).Parallel(),
		New("wait_for_output", "Wait for a terminal pane: until until_pattern appears in what was printed since the last input "+
			"(the echo of the typed command line does not count: after `sleep 5; echo DONE`, waiting for DONE ends when DONE is printed, 5 s later), or, "+
			"without a pattern, until a prompt shows (the command finished, the last one if several lines were typed; a coding agent CLI: "+
			"until it waits for the person again, its answer drawn); or until the timeout. "+
			"Then show the matched line and the last lines.",
			ReadOnly, onTerminal(term, waitForOutput)).Parallel(),
	}
	for _, t := range tools {
		r.Register(inBoundary(t, term.OutsideBoundary))
	}
}

// onTerminal is a terminal tool's handler: fn, given the terminals.
func onTerminal[P any](term TerminalDriver, fn func(context.Context, TerminalDriver, P) (Result, error)) func(context.Context, Call, P) (Result, error) {
	return func(ctx context.Context, _ Call, p P) (Result, error) { return fn(ctx, term, p) }
}

func writeToTerminal(ctx context.Context, term TerminalDriver, p writeTerminalParams) (Result, error) {
	waitMS, bad := intIn("wait_timeout_ms", p.WaitTimeoutMS, defaultWriteWaitMS, 0, maxWriteWaitMS, "wait_for_output to wait longer")
	if bad != nil {
		return *bad, nil
	}
	kind := p.TerminalType
	if kind == "" {
		kind = terminalTypeShell
	}
	if kind != terminalTypeShell && kind != terminalTypeInterp {
		return Errorf("terminal_type %q is not one of shell, interactive.", p.TerminalType), nil
	}
	st, err := term.Status(p.PaneID, p.TabID)
	if err != nil {
		return terminalError(p.PaneID, err)
	}
	if !st.Tab.Running {
		return exitedResult(term, p.PaneID, p.TabID, st)
	}
	if kind == terminalTypeShell && st.InputMark == 0 && st.LastInput == "" && !st.AtPrompt {
		if st, err = awaitFirstPrompt(ctx, term, p.PaneID, p.TabID); err != nil {
			return terminalError(p.PaneID, err)
		}
	}
	enter := p.PressEnter == nil || *p.PressEnter
	data, sent := []byte(nil), ""
	if key, ok := terminal.KeySequence(p.Text); ok {
		data, sent = key, "key "+strings.ToLower(strings.TrimSpace(p.Text))
		enter = strings.EqualFold(strings.TrimSpace(p.Text), "enter")
	} else {
		// Typed text ends lines with Enter (CR), as a terminal sends it; a trailing newline
		// is the Enter the model asked for, not a second one.
		text := strings.ReplaceAll(p.Text, "\r\n", "\n")
		if enter {
			text = strings.TrimSuffix(text, "\n")
		}
		text = strings.ReplaceAll(text, "\n", "\r")
		if text == "" && !enter {
			return Errorf("Nothing to send: text is empty and press_enter is false."), nil
		}
		data, sent = []byte(text), fmt.Sprintf("%d characters", len([]rune(text)))
		if enter {
			data = append(data, '\r')
			sent += " + Enter"
		}
	}
	if err := term.Write(p.PaneID, p.TabID, data); err != nil {
		return terminalError(p.PaneID, err)
	}
	w := terminal.WaitOptions{Since: st.Cursor, Timeout: time.Duration(waitMS) * time.Millisecond,
		Prompt: kind == terminalTypeShell, Stable: terminal.StableAfter, Input: string(data)}
	if !enter {
		w.Timeout = min(w.Timeout, keyWaitMS*time.Millisecond)
	}
	c, err := term.WaitForCompletion(ctx, p.PaneID, p.TabID, w)
	if err != nil {
		return Result{}, err
	}
	return completionResult(term, p.PaneID, p.TabID, "Sent "+sent+" to "+p.PaneID+".", c)
}

func readTerminal(_ context.Context, term TerminalDriver, p readTerminalParams) (Result, error) {
	lines, bad := intIn("lines", p.Lines, defaultReadLines, 1, maxReadLines, "page with cursor for more")
	if bad != nil {
		return *bad, nil
	}
	st, err := term.Status(p.PaneID, p.TabID)
	if err != nil {
		return terminalError(p.PaneID, err)
	}
	var b strings.Builder
	if p.Cursor == nil {
		text, err := term.Tail(p.PaneID, p.TabID, lines)
		if err != nil {
			return terminalError(p.PaneID, err)
		}
		fmt.Fprintf(&b, "Last %d lines of %s. Cursor at the end of the output: %d (pass it as cursor to read only newer output).\n", lines, p.PaneID, st.Cursor)
		b.WriteString(text)
	} else {
		page, err := term.ReadPage(p.PaneID, p.TabID, *p.Cursor, lines)
		if err != nil {
			return terminalError(p.PaneID, err)
		}
		if page.Dropped > 0 {
			fmt.Fprintf(&b, "Note: %d bytes after cursor %d are no longer kept (the scrollback is bounded); reading from %d, the oldest output kept.\n", page.Dropped, *p.Cursor, page.From)
		}
		if page.More {
			fmt.Fprintf(&b, "Output from %d to %d of %d. More follows: call again with cursor %d.\n", page.From, page.Next, page.End, page.Next)
		} else {
			fmt.Fprintf(&b, "Output from %d to the end (%d). Next cursor: %d.\n", page.From, page.End, page.Next)
		}
		b.WriteString(page.Text)
	}
	if !st.Tab.Running {
		b.WriteString("\n" + exitedNote(st))
	}
	return Result{Text: b.String()}, nil
}

// awaitFirstPrompt waits until a shell that has had no input yet shows its first prompt, or
// firstPromptWait passes (a prompt the detector does not know), or ctx ends.
func awaitFirstPrompt(ctx context.Context, term TerminalDriver, paneID, tabID string) (terminal.Status, error) {
	deadline := time.Now().Add(firstPromptWait)
	for {
		st, err := term.Status(paneID, tabID)
		if err != nil || st.AtPrompt || !st.Tab.Running || time.Now().After(deadline) {
			return st, err
		}
		select {
		case <-ctx.Done():
			return st, nil
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func pollTerminal(_ context.Context, term TerminalDriver, p pollTerminalParams) (Result, error) {
	st, err := term.Status(p.PaneID, p.TabID)
	if err != nil {
		return terminalError(p.PaneID, err)
	}
	text, err := term.Tail(p.PaneID, p.TabID, statusLines)
	if err != nil {
		return terminalError(p.PaneID, err)
	}
	idle := time.Duration(0)
	if !st.LastOutput.IsZero() {
		idle = time.Since(st.LastOutput)
	}
	var state string
	switch {
	case !st.Tab.Running:
		state = exitedNote(st)
	case st.AgentName != "" && st.Agent != terminal.AgentNone:
		state = st.Agent.Describe(st.AgentName)
	case st.Foreground != "" && !st.AtPrompt:
		state = fmt.Sprintf("busy: %s is running", st.Foreground)
	case st.Foreground != "":
		state = fmt.Sprintf("waiting for input: %s is running and shows a prompt", st.Foreground)
	case st.AtPrompt:
		state = "idle: the shell waits at a prompt"
	case idle < terminal.StableAfter:
		state = "busy: output is changing"
	default:
		state = "quiet: no prompt shows and the output is not changing"
	}
	agent := ""
	if st.AgentName != "" {
		agent = fmt.Sprintf("Agent: %s %s\n", st.AgentName, agentStateName(st.Agent))
	}
	return Result{Text: fmt.Sprintf("State: %s\n%sIdle for: %d ms\nTitle: %s\nCursor: %d\n--- last %d lines ---\n%s",
		state, agent, idle.Milliseconds(), st.Tab.Title, st.Cursor, statusLines, text)}, nil
}

// agentStateName is the state as poll_terminal_status's Agent line gives it.
func agentStateName(s terminal.AgentState) string {
	if s == terminal.AgentNone {
		return "unknown"
	}
	return string(s)
}

func waitForOutput(ctx context.Context, term TerminalDriver, p waitOutputParams) (Result, error) {
	waitMS, bad := intIn("timeout_ms", p.TimeoutMS, defaultWaitMS, 1, maxWaitMS, "call again to keep waiting")
	if bad != nil {
		return *bad, nil
	}
	var pattern *regexp.Regexp
	if p.UntilPattern != "" {
		var err error
		if pattern, err = regexp.Compile(p.UntilPattern); err != nil {
			return Errorf("until_pattern is not a valid regular expression (RE2 syntax): %v", err), nil
		}
	}
	st, err := term.Status(p.PaneID, p.TabID)
	if err != nil {
		return terminalError(p.PaneID, err)
	}
	if !st.Tab.Running {
		return exitedResult(term, p.PaneID, p.TabID, st)
	}
	// The wait starts at the last input and knows what it was, so that the shell's echo of
	// the typed line is not taken for its output.
	c, err := term.WaitForCompletion(ctx, p.PaneID, p.TabID, terminal.WaitOptions{Since: st.InputMark, Input: st.LastInput,
		Timeout: time.Duration(waitMS) * time.Millisecond, Prompt: pattern == nil, Pattern: pattern})
	if err != nil {
		return Result{}, err
	}
	return completionResult(term, p.PaneID, p.TabID, "Waited on "+p.PaneID+".", c)
}

// matchedLineChars bounds the matched line shown: enough for a log line, not for a minified
// file printed as one line.
const matchedLineChars = 300

// completionResult reports how a wait ended, the line a pattern matched on, and the last lines.
func completionResult(term TerminalDriver, paneID, tabID, what string, c terminal.Completion) (Result, error) {
	text, err := term.Tail(paneID, tabID, resultLines)
	if err != nil {
		return terminalError(paneID, err)
	}
	completion := c.Reason
	switch c.Reason {
	case terminal.CompletedPattern:
		completion += fmt.Sprintf(" (matched %q)\nMatched line: %q", c.Match, shorten(strings.TrimSpace(c.Line), matchedLineChars))
	case terminal.CompletedExited:
		st, err := term.Status(paneID, tabID)
		if err == nil {
			completion += " — " + exitedNote(st)
		}
	}
	return Result{Text: fmt.Sprintf("%s\nCompletion: %s\nCursor: %d\n--- last %d lines ---\n%s", what, completion, c.Cursor, resultLines, text)}, nil
}

// shorten cuts s to at most n characters, marking the cut.
func shorten(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

func exitedNote(st terminal.Status) string {
	code := "an unknown code"
	if st.Tab.ExitCode != nil {
		code = fmt.Sprintf("code %d", *st.Tab.ExitCode)
	}
	return fmt.Sprintf("The shell in this pane has exited with %s: restart the pane (the user can press Ctrl+R) to use it again.", code)
}

// exitedResult is the error a model gets for input to, or a wait on, an exited shell, with
// the last lines so it can see why it exited.
func exitedResult(term TerminalDriver, paneID, tabID string, st terminal.Status) (Result, error) {
	text, _ := term.Tail(paneID, tabID, resultLines) // Best effort: the note matters more.
	return Errorf("%s\n--- last %d lines ---\n%s", exitedNote(st), resultLines, text), nil
}

// terminalError turns the terminal's errors into results the model can act on; anything else
// is a failure of the machine.
func terminalError(paneID string, err error) (Result, error) {
	switch {
	case errors.Is(err, terminal.ErrNoPane):
		return Errorf("Pane %q has no terminal: check the pane id, or open a terminal in that pane first.", paneID), nil
	case errors.Is(err, terminal.ErrNoTab):
		return Errorf("%v: leave tab_id out to use the pane's active tab.", err), nil
	case errors.Is(err, terminal.ErrExited):
		return Errorf("%v. Restart the pane (the user can press Ctrl+R) before sending it input.", err), nil
	case errors.Is(err, terminal.ErrInputFull):
		return Errorf("%v. Send ctrl+c to interrupt it, or wait for it with wait_for_output.", err), nil
	}
	return Result{}, err
}

package terminal

import (
	"context"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// StableAfter is how long output must stay unchanged for a command to count as settled
// ("stable") when no prompt shows: long enough to outlast the gaps in a program's output,
// short enough that the model is not kept waiting.
const StableAfter = 300 * time.Millisecond

// SilentAfter is how long a wait after typing counts as settled when not a byte has come back,
// not even the echo: on a loaded machine a shell may take longer than StableAfter to read what
// was typed, and calling that "stable" reports a screen the command never touched. A program
// that reads with echo off and prints nothing still settles, after this.
const SilentAfter = 2 * time.Second

// Bounds on how much raw output one text view strips, so a huge line cannot make a tool call
// slow or flood the model.
const (
	maxTailBytes    = 128 << 10
	maxPageBytes    = 128 << 10
	maxPromptBytes  = 4 << 10
	maxPatternBytes = 64 << 10
)

// patternCheckEvery rate-limits pattern searches while output streams in.
const patternCheckEvery = 20 * time.Millisecond

// Completion reasons.
const (
	CompletedPrompt  = "prompt"  // a prompt is at the end of the output
	CompletedStable  = "stable"  // the output stopped changing
	CompletedTimeout = "timeout" // neither happened in time
	CompletedPattern = "pattern" // the awaited pattern appeared
	CompletedExited  = "exited"  // the process exited
)

// inputPrompts are the endings of lines that ask a person for input.
var inputPrompts = regexp.MustCompile(`(?i)(password[^:\n]*:|passphrase[^:]*:|\[y/n\]|\(y/n\)|\(yes/no[^)]*\)\??|\[yes/no\])\s*$`)

// agentInput is the idle input line of a coding agent drawn in a box: Claude Code's "│ > │".
var agentInput = regexp.MustCompile(`^\s*[│|]\s*>(\s.*)?[│|]?$`)

// LooksLikePrompt reports whether line, the line the cursor is on at the end of the output,
// looks like a shell or REPL waiting for input: it ends with "$ ", "# ", "> " or "% " (as
// PS1 shapes such as "user@host:~/dir$ ", "[user@host dir]# ", "zsh% ", ">>> " and "mysql> "
// do), with a prompt glyph such as ❯ or ➜, or with a question such as "password:" or "[y/N]".
func LooksLikePrompt(line string) bool {
	if inputPrompts.MatchString(line) {
		return true
	}
	trimmed := strings.TrimRightFunc(line, unicode.IsSpace)
	if trimmed == "" {
		return false
	}
	if agentInput.MatchString(trimmed) {
		return true
	}
	last, size := utf8.DecodeLastRuneInString(trimmed)
	spaced := len(trimmed) < len(line)
	switch last {
	case '❯', '➜', '»', 'λ', '→', '▶':
		return true
	case '›', '▌': // Codex CLI's input line
		return spaced
	case '$', '#', '>':
		return spaced
	case '%':
		before, _ := utf8.DecodeLastRuneInString(trimmed[:len(trimmed)-size])
		return spaced && !unicode.IsDigit(before) // "50% " is progress, "host% " a prompt
	}
	return false
}

// Status is what a tool reports about a tab.
type Status struct {
	Tab        TabInfo
	Cursor     int64     // output offset of the end of the output so far
	InputMark  int64     // output offset when input was last written
	LastInput  string    // what was written then (its first 8 KiB), for WaitOptions.Input
	LastOutput time.Time // zero before any output
	AtPrompt   bool      // the cursor is at a prompt (an agent CLI: it waits for the person)
	// Agent is the state of the agent CLI the tab runs (AgentNone: none it recognises), and
	// AgentName its template id.
	Agent     AgentState
	AgentName string
	// Foreground names the program running in the foreground when it is not the tab's own
	// shell (a command is running); empty when the shell itself waits.
	Foreground string
}

// Status reports a tab's state; tabID "" is the pane's active tab.
func (m *Manager) Status(paneID, tabID string) (Status, error) {
	t, err := m.tab(paneID, tabID)
	if err != nil {
		return Status{}, err
	}
	info := t.info()
	atPrompt := t.promptAtEnd(-1)
	t.mu.Lock()
	st := Status{Tab: info, Cursor: t.sb.end, InputMark: t.inputMark, LastInput: t.lastInput, LastOutput: t.lastOutput,
		AtPrompt: atPrompt}
	p := t.proc
	t.mu.Unlock()
	if r := t.recogniser(); r != nil {
		st.Agent, st.AgentName = t.agentState(), r.Agent
	}
	if info.Running && p != nil {
		if fg := foreground(p.ptmx); fg > 0 && fg != p.pid {
			st.Foreground = processName(fg)
		}
	}
	return st, nil
}

func processName(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	if err != nil {
		return "pid " + strconv.Itoa(pid)
	}
	return strings.TrimSpace(string(b))
}

// promptAtEnd reports whether the screen's cursor is at a prompt (see screenPrompt) drawn by
// output that began a line at or after since (-1: anywhere). Called without t.mu held.
func (t *tab) promptAtEnd(since int64) bool {
	if since >= 0 {
		t.mu.Lock()
		nl := t.sb.lastNewline()
		t.mu.Unlock()
		if nl < since {
			return false // no new line since the input: any prompt showing is the old one
		}
	}
	return t.screenPrompt()
}

// Tail returns the last n lines of what the tab's screen shows and, above it, of the lines
// that scrolled off it (trailing blank lines dropped).
func (m *Manager) Tail(paneID, tabID string, n int) (string, error) {
	t, err := m.tab(paneID, tabID)
	if err != nil {
		return "", err
	}
	sc := t.scr.snapshot(t, false)
	return lastLines(strings.Join(sc.Lines(), "\n"), n), nil
}

// Screen returns what a tab shows, with colours; tabID "" is the pane's active tab.
func (m *Manager) Screen(paneID, tabID string) (Screen, error) {
	t, err := m.tab(paneID, tabID)
	if err != nil {
		return Screen{}, err
	}
	return t.scr.snapshot(t, true), nil
}

func lastLines(text string, n int) string {
	lines := strings.Split(text, "\n")
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return strings.Join(lines[max(len(lines)-n, 0):], "\n")
}

// Page is a stretch of output read with a cursor.
type Page struct {
	Text    string // stripped text
	From    int64  // offset of the first byte read
	Next    int64  // the cursor for the next page
	End     int64  // offset of the end of the output
	Dropped int64  // bytes between the cursor and From that the scrollback no longer holds
	More    bool   // output continues after Next
}

// ReadPage reads up to lines lines starting at byte offset cursor. A cursor the scrollback
// has dropped reads from the oldest output kept (Dropped says how much was lost).
func (m *Manager) ReadPage(paneID, tabID string, cursor int64, lines int) (Page, error) {
	t, err := m.tab(paneID, tabID)
	if err != nil {
		return Page{}, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	from := min(max(cursor, t.sb.start), t.sb.end)
	to := min(t.sb.linesFrom(from, lines), from+maxPageBytes)
	raw := t.sb.read(from, to)
	return Page{Text: strings.TrimSuffix(Strip(raw), "\n"), From: from, Next: to, End: t.sb.end,
		Dropped: max(from-max(cursor, 0), 0), More: to < t.sb.end}, nil
}

// WaitOptions say what ends WaitForCompletion.
type WaitOptions struct {
	Since   int64          // only output from this offset on counts (Status.Cursor before writing)
	Timeout time.Duration  // give up after this long
	Prompt  bool           // a prompt line at the end of the output, begun after Since
	Stable  time.Duration  // no output for this long (0: not a reason)
	Pattern *regexp.Regexp // the stripped output since Since matches
	// Input is what was typed at Since (Status.LastInput, or the bytes just written). Its
	// echo is not output (see echoFilter): Pattern is not matched against the echoed lines,
	// and a prompt counts only once every line typed with Enter has been echoed, so several
	// lines typed at once are waited for to the last.
	Input string
}

// echoGrace is how long a prompt must stand, with no output, to count although some typed
// lines were never echoed: a program read them with echo off or swallowed them as typeahead,
// and their echo will not come. The same quiet as StableAfter, since that is when a shell
// wait would end anyway.
const echoGrace = StableAfter

// Completion is why WaitForCompletion returned.
type Completion struct {
	Reason string // CompletedPrompt, CompletedStable, CompletedTimeout, CompletedPattern or CompletedExited
	Match  string // what Pattern matched
	Line   string // the whole output line(s) Match is on
	Cursor int64  // the end of the output when it returned
}

// WaitForCompletion waits until the tab's output shows what w asks for, the process exits,
// or w.Timeout passes. Only ctx ending is an error.
func (m *Manager) WaitForCompletion(ctx context.Context, paneID, tabID string, w WaitOptions) (Completion, error) {
	t, err := m.tab(paneID, tabID)
	if err != nil {
		return Completion{}, err
	}
	echo := newEchoFilter(w.Input, w.Since)
	start := time.Now()
	deadline := start.Add(w.Timeout)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var lastPatternCheck time.Time
	var lastPatternEnd int64 = -1
	agent := t.recogniser()
	sawWorking := false
	t.mu.Lock()
	before := t.inputLines
	if w.Since != t.inputMark || before == nil {
		before = nil // not the last input's wait: the screen as it is now is the baseline
	}
	t.mu.Unlock()
	if before == nil {
		before = t.screenLines()
	}
	for {
		// The output the prompt is judged on reaches at least this far. Echoes count only up
		// to it: an echo that came after would be of a line typed at a later prompt, which the
		// one judged here does not follow (typed-ahead lines echo one prompt at a time).
		t.mu.Lock()
		judged := t.sb.end
		t.mu.Unlock()
		atPrompt := false
		if w.Prompt && agent != nil {
			// An agent is done when it waits for the person again: after it was seen working
			// (so its answer is drawn), or after agentSettle of quiet at its prompt when it
			// answered without visibly working.
			st := t.agentState()
			sawWorking = sawWorking || st == AgentWorking
			quiet := t.lastOutputTime()
			if quiet.Before(start) {
				quiet = start
			}
			atPrompt = st.Waiting() && (sawWorking || time.Since(quiet) >= agentSettle)
		} else if w.Prompt {
			atPrompt = t.promptAtEnd(w.Since)
		}
		t.mu.Lock()
		if t.changed == nil {
			t.changed = make(chan struct{})
		}
		changed := t.changed
		end, last, exited := t.sb.end, t.lastOutput, t.exitCode != nil || t.closed
		now := time.Now()
		checkPattern := w.Pattern != nil && end != lastPatternEnd && now.Sub(lastPatternCheck) >= patternCheckEvery
		checkEcho := atPrompt && !echo.done()
		var window []byte
		base := max(w.Since, end-maxPatternBytes, t.sb.start)
		if checkPattern || checkEcho {
			window = t.sb.read(base, end)
		}
		if checkPattern {
			lastPatternCheck, lastPatternEnd = now, end
		}
		t.mu.Unlock()
		if checkEcho {
			echo.scan(window[:max(min(judged, end)-base, 0)], base)
		}
		echoed := echo.done()
		if checkPattern {
			echo.scan(window, base)
			text := Strip(echo.visible(window, base))
			if loc := w.Pattern.FindStringIndex(text); loc != nil && loc[1] > loc[0] {
				return Completion{Reason: CompletedPattern, Match: text[loc[0]:loc[1]], Line: lineAround(text, loc[0], loc[1]), Cursor: end}, nil
			}
			sc := t.scr.snapshot(t, false)
			if match, line, ok := matchScreen(&sc, before, w.Input, w.Pattern); ok {
				return Completion{Reason: CompletedPattern, Match: match, Line: line, Cursor: end}, nil
			}
		}
		quietSince := last
		if quietSince.Before(start) {
			quietSince = start
		}
		echoPending := atPrompt && !echoed && now.Sub(quietSince) < echoGrace
		switch {
		case atPrompt && !echoPending:
			return Completion{Reason: CompletedPrompt, Cursor: end}, nil
		case exited:
			return Completion{Reason: CompletedExited, Cursor: end}, nil
		}
		stable := w.Stable
		if w.Input != "" && end == w.Since {
			stable = max(stable, SilentAfter)
		}
		if stable > 0 && now.Sub(quietSince) >= stable {
			return Completion{Reason: CompletedStable, Cursor: end}, nil
		}
		if !now.Before(deadline) {
			return Completion{Reason: CompletedTimeout, Cursor: end}, nil
		}
		wait := deadline.Sub(now)
		if stable > 0 {
			wait = min(wait, quietSince.Add(stable).Sub(now))
		}
		if echoPending {
			wait = min(wait, quietSince.Add(echoGrace).Sub(now))
		}
		if w.Prompt && agent != nil {
			wait = min(wait, agentRecheck) // the output resting is a change too (see agentQuiet)
		}
		if w.Pattern != nil && end != lastPatternEnd {
			wait = min(wait, lastPatternCheck.Add(patternCheckEvery).Sub(now))
		}
		timer.Reset(wait)
		select {
		case <-changed:
		case <-timer.C:
		case <-ctx.Done():
			return Completion{Cursor: end}, ctx.Err()
		}
	}
}

// agentSettle is how long an agent CLI must show its prompt, with no output, for a wait to
// end without having seen it work: long enough for it to start working on what was typed
// (it redraws within a few hundred milliseconds), short enough not to keep a model waiting.
const agentSettle = 2 * time.Second

// agentRecheck is how often a wait on an agent CLI reads its screen while nothing is printed.
const agentRecheck = 100 * time.Millisecond

func (t *tab) lastOutputTime() time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.lastOutput
}

// lineAround is the text of the lines that text[from:to] is on.
func lineAround(text string, from, to int) string {
	start := strings.LastIndexByte(text[:from], '\n') + 1
	stop := len(text)
	if i := strings.IndexByte(text[to:], '\n'); i >= 0 {
		stop = to + i
	}
	if to > from && text[to-1] == '\n' { // the match ends the line
		stop = min(stop, to-1)
	}
	return text[start:stop]
}

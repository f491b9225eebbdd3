package terminal

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// AgentState is what an agent CLI in a terminal is doing, as its screen shows it.
type AgentState string

const (
	AgentNone     AgentState = ""         // the tab does not run an agent CLI it knows
	AgentWorking  AgentState = "working"  // it is thinking or running tools
	AgentIdle     AgentState = "idle"     // it waits at its prompt for the next instruction
	AgentAsking   AgentState = "asking"   // it asks the person a question or for a permission
	AgentFinished AgentState = "finished" // it is idle after a turn it completed, or it exited
)

// Recogniser says how one agent CLI shows its state on screen. Patterns are matched against
// the lines at the bottom of the screen (statusRows), where these programs draw their prompt
// and status line; the first kind that matches wins, in the order Asking, Working, Idle.
type Recogniser struct {
	Agent   string           // the template id: claude, codex, aider
	Asking  []*regexp.Regexp // a question or permission dialog
	Working []*regexp.Regexp // the status line while it works
	Idle    []*regexp.Regexp // the status line or prompt while it waits
	// Finished marks a turn that ended (a summary line such as "Worked for 12s"); when idle
	// with it on screen below the last line that begins a turn (Turn, the person's message),
	// the state is AgentFinished.
	Finished []*regexp.Regexp
	// Interrupted marks a turn the person stopped (a refused permission, Esc): idle after it.
	Interrupted []*regexp.Regexp
	Turn        *regexp.Regexp
	// Composer matches the input line the person types the next message into, which looks
	// like a Turn line: the last row it matches is not a turn.
	Composer *regexp.Regexp
	// OpenTurnWorks says the CLI hides its working line while its answer streams: a turn
	// with no Finished line after it yet is still being worked on.
	OpenTurnWorks bool
	// IdleAtCursor matches the text before the cursor when the prompt is the cursor's line.
	IdleAtCursor *regexp.Regexp
}

// statusRows is how many rows above the bottom of what is written on screen a recogniser
// looks at: Claude Code's prompt box, status line and a permission dialog fit in it.
const statusRows = 16

func res(exprs ...string) []*regexp.Regexp {
	out := make([]*regexp.Regexp, len(exprs))
	for i, e := range exprs {
		out[i] = regexp.MustCompile(e)
	}
	return out
}

// Recognisers are the built-in agent CLIs' recognisers, by template id. Claude Code's and
// Codex CLI's are tested on recordings of the real programs in testdata/agents
// (scripts/record-agents); Aider's is written from its documented prompt and questions and has
// no recording yet (it installs with pip, which this machine cannot reach).
var Recognisers = map[string]*Recogniser{
	// Claude Code 2.x draws its prompt "❯" between two rules, and keeps it there while it
	// works; only the status line under it tells the states apart.
	"claude": {
		Agent:       "claude",
		Asking:      res(`Do you want to (proceed|make this edit|create|allow)`, `❯\s*1\.\s*Yes`, `Esc to cancel`),
		Working:     res(`esc to interrupt`),
		Idle:        res(`\? for shortcuts`, `^\s*❯\s`),
		Finished:    res(`✻ \S+ for (\d+m )?\d+s`),
		Interrupted: res(`Interrupted · `),
		Turn:        regexp.MustCompile(`^❯ \S`),
		Composer:    regexp.MustCompile(`^❯`),
	},
	// Codex CLI: "• Working (3s • esc to interrupt)" until the answer streams, when that line
	// goes and the hints under its composer "›" look idle; "Worked for 5s" ends the turn.
	"codex": {
		Agent:         "codex",
		Asking:        res(`(?i)would you like to (run|make|apply)`, `(?i)allow (command|codex)`, `(?i)yes, proceed`),
		Working:       res(`(?i)esc to interrupt`),
		Idle:          res(`\? for shortcuts`, `context left`),
		Finished:      res(`Worked for <?(\d+m )?\d+s`), // "Worked for <1s" after a fast turn
		Interrupted:   res(`Conversation interrupted`),
		Turn:          regexp.MustCompile(`^› \S`),
		Composer:      regexp.MustCompile(`^›`),
		OpenTurnWorks: true,
	},
	// Aider: a plain line prompt ("> ", "architect> "), questions ending "(Y)es/(N)o …".
	"aider": {
		Agent:        "aider",
		Asking:       res(`\(Y\)es/\(N\)o`, `\[Yes\]:\s*$`),
		Working:      res(`Waiting for`, `(?i)thinking`),
		Finished:     res(`^Tokens: .* sent`),
		IdleAtCursor: regexp.MustCompile(`^(\w+ )?(multi )?> $`),
	},
}

// recogniserFor picks the recogniser of a tab's spec: the one it names, or the one of its
// command's program.
func recogniserFor(spec Spec) *Recogniser {
	if spec.Agent != "" {
		return Recognisers[spec.Agent]
	}
	if len(spec.Command) == 0 {
		return nil
	}
	return Recognisers[filepath.Base(spec.Command[0])]
}

func (t *tab) recogniser() *Recogniser { return recogniserFor(t.spec) }

// State reads the agent's state off the screen. AgentNone when nothing it knows shows (still
// starting, or a screen of something else).
func (r *Recogniser) State(sc *Screen) AgentState {
	all := sc.ScreenRows()
	lines := all[max(len(all)-statusRows, 0):]
	any := func(res []*regexp.Regexp) bool {
		for _, re := range res {
			for _, l := range lines {
				if re.MatchString(l) {
					return true
				}
			}
		}
		return false
	}
	switch {
	case any(r.Asking):
		return AgentAsking
	case any(r.Working):
		return AgentWorking
	case any(r.Idle) || r.IdleAtCursor != nil && r.IdleAtCursor.MatchString(sc.BeforeCursor()):
		return r.afterTurn(all)
	}
	return AgentNone
}

// afterTurn is the state of a CLI showing its idle hints, from the last turn on screen:
// finished when a Finished line follows the person's last message, working when none does
// and the CLI hides its working line while it answers, idle otherwise.
func (r *Recogniser) afterTurn(rows []string) AgentState {
	composer := -1
	if r.Composer != nil {
		for i := len(rows) - 1; i >= 0; i-- {
			if r.Composer.MatchString(rows[i]) {
				composer = i
				break
			}
		}
	}
	for i := len(rows) - 1; i >= 0; i-- {
		if i == composer {
			continue
		}
		for _, re := range r.Finished {
			if re.MatchString(rows[i]) {
				return AgentFinished
			}
		}
		for _, re := range r.Interrupted {
			if re.MatchString(rows[i]) {
				return AgentIdle
			}
		}
		if r.Turn != nil && r.Turn.MatchString(rows[i]) {
			if r.OpenTurnWorks {
				return AgentWorking
			}
			return AgentIdle
		}
	}
	return AgentIdle
}

// Waiting reports whether the state is the agent waiting for the person.
func (s AgentState) Waiting() bool {
	return s == AgentIdle || s == AgentAsking || s == AgentFinished
}

// AgentState is the state of the agent CLI in a pane's active tab: AgentNone when the tab
// does not run one it recognises, AgentFinished when it has exited.
func (m *Manager) AgentState(paneID string) (AgentState, error) {
	t, err := m.tab(paneID, "")
	if err != nil {
		return AgentNone, err
	}
	return t.agentState(), nil
}

func (t *tab) agentState() AgentState {
	r := t.recogniser()
	if r == nil {
		return AgentNone
	}
	t.mu.Lock()
	exited, last := t.exitCode != nil, t.lastOutput
	t.mu.Unlock()
	if exited {
		return AgentFinished
	}
	sc := t.scr.snapshot(t, false)
	st := r.State(&sc)
	if st.Waiting() && time.Since(last) < agentQuiet {
		// A screen read in the middle of a redraw can lack the working line for a moment;
		// these CLIs animate while they work, so waiting shows only once the output rests.
		return AgentWorking
	}
	return st
}

// agentQuiet is how long an agent CLI's output must rest before a waiting screen counts:
// longer than the gap between the frames of its working spinner (about 0.1 s), short enough
// to be unnoticed.
const agentQuiet = 400 * time.Millisecond

// Describe is the state as poll_terminal_status words it.
func (s AgentState) Describe(agent string) string {
	switch s {
	case AgentWorking:
		return fmt.Sprintf("%s is working", agent)
	case AgentIdle:
		return fmt.Sprintf("%s is idle at its prompt", agent)
	case AgentAsking:
		return fmt.Sprintf("%s asks a question or a permission: read the screen and answer it", agent)
	case AgentFinished:
		return fmt.Sprintf("%s finished its turn and waits at its prompt", agent)
	}
	return strings.TrimSpace(agent + " state not recognised (starting, or another screen)")
}

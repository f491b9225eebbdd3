package agent

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/clusterspace/clusterspace/backend/tools"
)

// GuardSettings are the loop guard's thresholds; a zero field takes its default.
type GuardSettings struct {
	RepeatLimit      int `json:"repeatLimit,omitempty"`      // the same call with the same result (3)
	SameCallLimit    int `json:"sameCallLimit,omitempty"`    // the same call that changes something, in a row (5)
	SameResultLimit  int `json:"sameResultLimit,omitempty"`  // different calls, the same result, in a row (4)
	NoProgressSteps  int `json:"noProgressSteps,omitempty"`  // steps without new output, a change or todo progress (10)
	ErrorStreakLimit int `json:"errorStreakLimit,omitempty"` // the same error from one tool, in a row (3)
	DisableForSteps  int `json:"disableForSteps,omitempty"`  // how long an erroring tool rests (5)
	MaxBlocks        int `json:"maxBlocks,omitempty"`        // blocks before the agent halts (5)
}

// Validate names the first threshold that is out of range.
func (s GuardSettings) Validate() error {
	for _, f := range []struct {
		name string
		v    int
	}{{"repeatLimit", s.RepeatLimit}, {"sameCallLimit", s.SameCallLimit}, {"sameResultLimit", s.SameResultLimit},
		{"noProgressSteps", s.NoProgressSteps}, {"errorStreakLimit", s.ErrorStreakLimit}, {"disableForSteps", s.DisableForSteps},
		{"maxBlocks", s.MaxBlocks}} {
		if f.v < 0 || f.v > 1000 {
			return fmt.Errorf("guard.%s: %d is outside 0 (the default) to 1000", f.name, f.v)
		}
	}
	return nil
}

func (s GuardSettings) withDefaults() GuardSettings {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&s.RepeatLimit, repeatLimit)
	def(&s.SameCallLimit, sameCallLimit)
	def(&s.SameResultLimit, sameResultLimit)
	def(&s.NoProgressSteps, noProgressSteps)
	def(&s.ErrorStreakLimit, errorStreakLimit)
	def(&s.DisableForSteps, disableForSteps)
	def(&s.MaxBlocks, maxGuardBlocks)
	return s
}

// GuardAction is what the guard decided.
type GuardAction string

const (
	GuardAllow   GuardAction = "allow"
	GuardBlock   GuardAction = "block"   // this call does not run; the model is told why
	GuardDisable GuardAction = "disable" // the tool is disabled for a while after an error streak
	GuardNudge   GuardAction = "nudge"   // the call ran (or the turn stands); the model is told what to reconsider
	GuardHalt    GuardAction = "halt"    // too many blocks: the goal (or chat turn) ends with a report
)

// GuardDecision is one decision and the message the model (and the step log) gets.
type GuardDecision struct {
	Action  GuardAction `json:"action"`
	Rule    string      `json:"rule,omitempty"` // repeat | same_call | alternation | disabled | error_streak | same_result | no_progress | narrative | verify_before_claim | open_todos | halt
	Tool    string      `json:"tool,omitempty"`
	Message string      `json:"message,omitempty"`
}

// GuardCall is a call as the guard sees it.
type GuardCall struct {
	Tool string
	Args json.RawMessage
	// Mutates: the tool changes something (its risk is above read_only).
	Mutates bool
	// Bookkeeping: the tool keeps the owner's own books (Agent.Bookkeeping), no work done.
	Bookkeeping bool
	// OpenTodos are the checklist items not done yet when the call is a claim of completion.
	OpenTodos []string
}

// Guard watches an agent's steps for loops. It is deterministic and calls no model. Not safe
// for concurrent use: one loop (a goal's runner, a chat's chain) owns it.
type Guard struct {
	set      GuardSettings
	history  []GuardRecord
	seen     map[[32]byte]int // result digest -> step it was last seen at
	disabled map[string]int   // tool -> step number it is disabled until
	step     int
	blocks   int
	// Steps of the last successful change, and of the last successful read after it.
	lastChange, lastCheck int
	// What a claim was already nudged about, so the same nudge is not repeated.
	claimNudgedChange, claimNudgedTodos int
	progressAt                          int // the step of the last progress
	sameResultNudged                    int // the step of the last same-result nudge
	stepsSinceTurn                      int // tool steps since the model's last turn
}

// NewGuard returns an empty guard with the default thresholds.
func NewGuard() *Guard { return NewGuardWith(GuardSettings{}) }

// NewGuardWith returns an empty guard with the given thresholds (zero fields: defaults).
func NewGuardWith(s GuardSettings) *Guard {
	return &Guard{set: s.withDefaults(), seen: map[[32]byte]int{}, disabled: map[string]int{}, claimNudgedChange: -1, claimNudgedTodos: -1}
}

// Blocks is how many calls the guard has blocked.
func (g *Guard) Blocks() int { return g.blocks }

// RestoreBlocks carries the count of blocks over from an earlier run of the same work (a
// resumed goal), so a restart does not wipe the slate of an agent that keeps repeating itself.
func (g *Guard) RestoreBlocks(n int) { g.blocks = n }

// Before decides whether a call may run. A nudge lets it run with a note for the model.
func (g *Guard) Before(c GuardCall) GuardDecision {
	a := canonicalJSON(c.Args)
	tool, s := c.Tool, g.set
	var d GuardDecision
	switch until := g.disabled[tool]; {
	case until > g.step:
		d = GuardDecision{GuardBlock, "disabled", tool, fmt.Sprintf(
			"GUARD: %s is disabled for %d more step(s) because it failed the same way %d times in a row. Use a different tool or approach.",
			tool, until-g.step, s.ErrorStreakLimit)}
	case repeatedCall(g.history, tool, a, s.RepeatLimit):
		d = GuardDecision{GuardBlock, "repeat", tool, fmt.Sprintf(
			"GUARD: blocked %s — you made this exact call %d times and got the same result each time. Repeating it will not change anything: change the arguments, check your assumptions, or try another approach.",
			tool, s.RepeatLimit)}
	case c.Mutates && sameCallStreak(g.history, tool, a, s.SameCallLimit):
		d = GuardDecision{GuardBlock, "same_call", tool, fmt.Sprintf(
			"GUARD: blocked %s — your last %d calls were this very call. Doing it again is a loop: read what it did, then do something different (to wait for a command, use wait_for_output).",
			tool, s.SameCallLimit)}
	case tool == tools.ToolClaimComplete && g.lastChange > g.lastCheck && g.claimNudgedChange != g.lastChange:
		// A nudge, not a block: the criterion is what decides, and it runs either way.
		g.claimNudgedChange = g.lastChange
		return GuardDecision{GuardNudge, "verify_before_claim", tool,
			"GUARD: you claimed completion without reading or checking anything after your last change. If verification fails, verify your work yourself first (read the file, run the check, look at the page) before claiming again."}
	case tool == tools.ToolClaimComplete && len(c.OpenTodos) > 0 && g.claimNudgedTodos != len(c.OpenTodos):
		g.claimNudgedTodos = len(c.OpenTodos)
		return GuardDecision{GuardNudge, "open_todos", tool, fmt.Sprintf(
			"GUARD: you claimed completion with %d checklist item(s) still open: %s. If verification fails, finish them (complete_todo) or rewrite the checklist before claiming again.",
			len(c.OpenTodos), strings.Join(c.OpenTodos, "; "))}
	default:
		if p := alternation(g.history, tool, a); p > 0 {
			d = GuardDecision{GuardBlock, "alternation", tool, fmt.Sprintf(
				"GUARD: blocked %s — your last %d calls repeat a cycle of %d calls with unchanged results. Break the cycle: do something different.",
				tool, 2*p, p)}
		}
	}
	if d.Action != GuardBlock {
		return GuardDecision{Action: GuardAllow}
	}
	g.blocks++
	if g.blocks >= s.MaxBlocks {
		return GuardDecision{GuardHalt, "halt", tool, fmt.Sprintf(
			"GUARD: halted after %d blocked calls; the agent kept repeating itself. Last block: %s", g.blocks, d.Message)}
	}
	return d
}

// After records a call that ran. It may disable the tool after an error streak, or nudge the
// model when its calls keep returning the same thing or nothing new comes of them (new
// output, a successful change and a checklist item done count as progress).
func (g *Guard) After(c GuardCall, result string, isError bool) GuardDecision {
	g.step++
	g.stepsSinceTurn++
	rec := NewGuardRecord(c.Tool, c.Args, result, isError)
	rec.Mutates = c.Mutates
	g.history = append(g.history, rec)
	if len(g.history) > guardHistoryLimit {
		g.history = g.history[len(g.history)-guardHistoryLimit:]
	}
	if !isError && !c.Bookkeeping {
		if c.Mutates {
			g.lastChange = g.step
		} else if g.lastChange > 0 {
			g.lastCheck = g.step
		}
	}
	todoDone := !isError && (c.Tool == tools.ToolCompleteTodo || c.Tool == tools.ToolWriteTodos)
	if _, old := g.seen[rec.Result]; !old || (c.Mutates && !isError) || todoDone {
		g.progressAt = g.step
	}
	g.seen[rec.Result] = g.step
	if len(g.seen) > seenLimit {
		for k, at := range g.seen {
			if at < g.step-seenLimit {
				delete(g.seen, k)
			}
		}
	}
	s := g.set
	switch {
	case errorStreak(g.history, s.ErrorStreakLimit):
		g.disabled[c.Tool] = g.step + s.DisableForSteps
		return GuardDecision{GuardDisable, "error_streak", c.Tool, fmt.Sprintf(
			"GUARD: %s failed %d times in a row with the same error (%s). It is disabled for the next %d steps. Read the error, change your approach, or use another tool.",
			c.Tool, s.ErrorStreakLimit, Truncate(rec.Error, 200), s.DisableForSteps)}
	case sameResultStreak(g.history, s.SameResultLimit) && g.step-g.sameResultNudged >= s.SameResultLimit:
		g.sameResultNudged = g.step // nudge once per streak
		return GuardDecision{GuardNudge, "same_result", c.Tool, fmt.Sprintf(
			"GUARD: your last %d calls were different but all returned the same result, so they are not telling you anything new. Step back: is the pane, page or path the one you think it is?",
			s.SameResultLimit)}
	case g.step-g.progressAt >= s.NoProgressSteps:
		g.progressAt = g.step // nudge once per stretch
		return GuardDecision{GuardNudge, "no_progress", c.Tool, fmt.Sprintf(
			"GUARD: %d steps without new output, a change or a finished checklist item. What you are doing is not moving the work forward: re-read the goal and try a different approach, or report what blocks you.",
			s.NoProgressSteps)}
	}
	return GuardDecision{Action: GuardAllow}
}

// Said checks a model turn's words against what the agent did: saying it ran, tested or
// verified something when no tool ran since its last turn and none is called now.
func (g *Guard) Said(text string, callsNow int) GuardDecision {
	since := g.stepsSinceTurn
	g.stepsSinceTurn = 0
	claim, ok := narrativeMismatch(text, since, callsNow)
	if !ok {
		return GuardDecision{Action: GuardAllow}
	}
	return GuardDecision{GuardNudge, "narrative", "", fmt.Sprintf(
		"GUARD: you wrote %q, but no tool call did that since your last turn. Do not report work that did not happen: run it with a tool and read the result, or say plainly that it was not done.",
		Truncate(claim, 80))}
}

// Truncate keeps the first n runes of s, marking a cut with "…".
func Truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

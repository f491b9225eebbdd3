package agent

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
)

// Loop-guard thresholds. Three identical outcomes is the point where a person would say "you
// already tried that"; five blocks means the model is not listening, so the agent halts.
const (
	repeatLimit       = 3  // identical call + identical result
	errorStreakLimit  = 3  // the same error from the same tool, in a row
	disableForSteps   = 5  // how long a tool stays disabled after an error streak
	maxGuardBlocks    = 5  // blocks before the agent halts
	guardHistoryLimit = 12 // steps remembered: enough for A/B/C alternation twice over
)

// GuardRecord is what the guard remembers of a step: a canonical form of the call and a
// digest of its result.
type GuardRecord struct {
	Tool    string
	Args    string // canonical JSON
	Result  [32]byte
	IsError bool
	Error   string // the error text, for messages
}

// NewGuardRecord builds a record, canonicalising the arguments so that key order and
// whitespace do not hide a repeat.
func NewGuardRecord(tool string, args json.RawMessage, result string, isError bool) GuardRecord {
	r := GuardRecord{Tool: tool, Args: canonicalJSON(args), Result: sha256.Sum256([]byte(result)), IsError: isError}
	if isError {
		r.Error = result
	}
	return r
}

func canonicalJSON(raw json.RawMessage) string {
	var v any
	if len(bytes.TrimSpace(raw)) == 0 {
		return "{}"
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v) // maps marshal with sorted keys
	return string(b)
}

func (r GuardRecord) sameCall(tool, args string) bool { return r.Tool == tool && r.Args == args }

func (r GuardRecord) sameOutcome(o GuardRecord) bool {
	return r.Tool == o.Tool && r.Args == o.Args && r.Result == o.Result
}

// repeatedCall reports whether the next call (tool, args) was already made repeatLimit times
// among the remembered steps with the very same result each time: calling again cannot help.
func repeatedCall(history []GuardRecord, tool, args string) bool {
	var first *GuardRecord
	n := 0
	for i := len(history) - 1; i >= 0; i-- {
		h := history[i]
		if !h.sameCall(tool, args) {
			continue
		}
		if first == nil {
			first = &history[i]
		} else if h.Result != first.Result {
			return false // the result changed: that is progress (or at least news)
		}
		n++
	}
	return n >= repeatLimit
}

// alternation returns the period (2 or 3) of an A/B or A/B/C cycle that the history shows
// twice with unchanged results and that the next call would continue, or 0.
func alternation(history []GuardRecord, tool, args string) int {
	for _, p := range []int{2, 3} {
		if len(history) < 2*p {
			continue
		}
		last, prev := history[len(history)-p:], history[len(history)-2*p:len(history)-p]
		cycle := true
		distinct := map[string]bool{}
		for i := range p {
			if !last[i].sameOutcome(prev[i]) {
				cycle = false
				break
			}
			distinct[last[i].Tool+last[i].Args] = true
		}
		// A cycle needs p different calls (A/A/A is a repeat, not an alternation) and the next
		// call must be the one that starts it again.
		if cycle && len(distinct) == p && last[0].sameCall(tool, args) {
			return p
		}
	}
	return 0
}

// errorStreak reports whether the last errorStreakLimit steps are the same tool failing with
// the same error.
func errorStreak(history []GuardRecord) bool {
	if len(history) < errorStreakLimit {
		return false
	}
	tail := history[len(history)-errorStreakLimit:]
	for _, h := range tail {
		if !h.IsError || h.Tool != tail[0].Tool || h.Error != tail[0].Error {
			return false
		}
	}
	return true
}

// GuardAction is what the guard decided.
type GuardAction string

const (
	GuardAllow   GuardAction = "allow"
	GuardBlock   GuardAction = "block"   // this call does not run; the model is told why
	GuardDisable GuardAction = "disable" // the tool is disabled for a while after an error streak
	GuardHalt    GuardAction = "halt"    // too many blocks: the goal (or chat turn) ends with a report
)

// GuardDecision is one decision and the message the model (and the step log) gets.
type GuardDecision struct {
	Action  GuardAction `json:"action"`
	Rule    string      `json:"rule,omitempty"` // repeat | alternation | disabled | error_streak | halt
	Tool    string      `json:"tool,omitempty"`
	Message string      `json:"message,omitempty"`
}

// Guard watches an agent's steps for loops. It is deterministic and calls no model. Not safe
// for concurrent use: one loop (a goal's runner, a chat's chain) owns it.
type Guard struct {
	history  []GuardRecord
	disabled map[string]int // tool -> step number it is disabled until
	step     int
	blocks   int
}

// NewGuard returns an empty guard.
func NewGuard() *Guard { return &Guard{disabled: map[string]int{}} }

// Blocks is how many calls the guard has blocked.
func (g *Guard) Blocks() int { return g.blocks }

// RestoreBlocks carries the count of blocks over from an earlier run of the same work (a
// resumed goal), so a restart does not wipe the slate of an agent that keeps repeating itself.
func (g *Guard) RestoreBlocks(n int) { g.blocks = n }

// Before decides whether a call may run.
func (g *Guard) Before(tool string, args json.RawMessage) GuardDecision {
	a := canonicalJSON(args)
	var d GuardDecision
	switch until := g.disabled[tool]; {
	case until > g.step:
		d = GuardDecision{GuardBlock, "disabled", tool, fmt.Sprintf(
			"GUARD: %s is disabled for %d more step(s) because it failed the same way %d times in a row. Use a different tool or approach.",
			tool, until-g.step, errorStreakLimit)}
	case repeatedCall(g.history, tool, a):
		d = GuardDecision{GuardBlock, "repeat", tool, fmt.Sprintf(
			"GUARD: blocked %s — you made this exact call %d times and got the same result each time. Repeating it will not change anything: change the arguments, check your assumptions, or try another approach.",
			tool, repeatLimit)}
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
	if g.blocks >= maxGuardBlocks {
		return GuardDecision{GuardHalt, "halt", tool, fmt.Sprintf(
			"GUARD: halted after %d blocked calls; the agent kept repeating itself. Last block: %s", g.blocks, d.Message)}
	}
	return d
}

// After records a call that ran; it may disable the tool after an error streak.
func (g *Guard) After(tool string, args json.RawMessage, result string, isError bool) GuardDecision {
	g.step++
	g.history = append(g.history, NewGuardRecord(tool, args, result, isError))
	if len(g.history) > guardHistoryLimit {
		g.history = g.history[len(g.history)-guardHistoryLimit:]
	}
	if errorStreak(g.history) {
		g.disabled[tool] = g.step + disableForSteps
		return GuardDecision{GuardDisable, "error_streak", tool, fmt.Sprintf(
			"GUARD: %s failed %d times in a row with the same error (%s). It is disabled for the next %d steps. Read the error, change your approach, or use another tool.",
			tool, errorStreakLimit, Truncate(g.history[len(g.history)-1].Error, 200), disableForSteps)}
	}
	return GuardDecision{Action: GuardAllow}
}

// Truncate keeps the first n runes of s, marking a cut with "…".
func Truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

package agent

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"regexp"
)

// The guard's default thresholds. Three identical outcomes is the point where a person would
// say "you already tried that"; five blocks means the model is not listening, so the agent
// halts. A goal may set its own (GuardSettings).
const (
	repeatLimit       = 3  // identical call + identical result
	sameCallLimit     = 5  // the same call that changes something, in a row, whatever it returned
	sameResultLimit   = 4  // different calls, the same result, in a row
	noProgressSteps   = 10 // steps without new output, a change or todo progress
	errorStreakLimit  = 3  // the same error from the same tool, in a row
	disableForSteps   = 5  // how long a tool stays disabled after an error streak
	maxGuardBlocks    = 5  // blocks before the agent halts
	guardHistoryLimit = 12 // steps remembered: enough for A/B/C alternation twice over
	seenLimit         = 64 // result digests remembered for "is this output new?"
)

// GuardRecord is what the guard remembers of a step: a canonical form of the call and a
// digest of its result with its volatile details (cursors, timings) taken out.
type GuardRecord struct {
	Tool    string
	Args    string // canonical JSON
	Result  [32]byte
	IsError bool
	Error   string // the error text, for messages
	Mutates bool   // the tool changes something (above read_only)
}

// NewGuardRecord builds a record, canonicalising the arguments so that key order and
// whitespace do not hide a repeat, and the result so that neither a moving cursor nor a
// scrolling screen does: only what the call produced is digested (producedResult).
func NewGuardRecord(tool string, args json.RawMessage, result string, isError bool) GuardRecord {
	digest := sha256.Sum256([]byte(stable(producedResult(tool, args, result))))
	r := GuardRecord{Tool: tool, Args: canonicalJSON(args), Result: digest, IsError: isError}
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

// volatile matches the details of a tool result that change on every call without saying
// anything new: byte cursors and offsets, and elapsed times ("Idle for: 1200 ms", "after
// 31 ms", "took 2.5s"). Progress figures such as "40%" are news and stay.
var volatile = regexp.MustCompile(`(?i)(\bcursor\b[^0-9\n]{0,40})\d+|\boutput from \d+ to \d+( of \d+)?|\b\d+(\.\d+)? ?(ms|s)\b`)

// stable is a result with its volatile details replaced by a placeholder.
func stable(result string) string { return volatile.ReplaceAllString(result, "${1}#") }

func (r GuardRecord) sameCall(tool, args string) bool { return r.Tool == tool && r.Args == args }

func (r GuardRecord) sameOutcome(o GuardRecord) bool {
	return r.Tool == o.Tool && r.Args == o.Args && r.Result == o.Result
}

// repeatedCall reports whether the next call (tool, args) would be the (limit+1)-th in a
// row of the very same call with the very same result among the remembered steps: calling
// again cannot help. Other calls in between do not break the count; a changed result does.
func repeatedCall(history []GuardRecord, tool, args string, limit int) bool {
	var latest *GuardRecord
	n := 0
	for i := len(history) - 1; i >= 0; i-- {
		h := history[i]
		if !h.sameCall(tool, args) {
			continue
		}
		if latest == nil {
			latest = &history[i]
		} else if h.Result != latest.Result {
			break // the result changed: that was progress (or at least news)
		}
		n++
	}
	return n >= limit
}

// sameCallStreak reports whether the last limit steps were all this very call, one that
// changes something: typing the same command over and over, whatever the screen says.
func sameCallStreak(history []GuardRecord, tool, args string, limit int) bool {
	if len(history) < limit {
		return false
	}
	for _, h := range history[len(history)-limit:] {
		if !h.sameCall(tool, args) || !h.Mutates {
			return false
		}
	}
	return true
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

// errorStreak reports whether the last limit steps are the same tool failing with the same
// error.
func errorStreak(history []GuardRecord, limit int) bool {
	if len(history) < limit {
		return false
	}
	tail := history[len(history)-limit:]
	for _, h := range tail {
		if !h.IsError || h.Tool != tail[0].Tool || h.Error != tail[0].Error {
			return false
		}
	}
	return true
}

// sameResultStreak reports whether the last limit steps were different calls that all
// returned the same thing: the agent is not learning anything from them.
func sameResultStreak(history []GuardRecord, limit int) bool {
	if len(history) < limit {
		return false
	}
	tail := history[len(history)-limit:]
	calls := map[string]bool{}
	for _, h := range tail {
		if h.Result != tail[0].Result {
			return false
		}
		calls[h.Tool+h.Args] = true
	}
	return len(calls) > 1
}

// claimedAction matches a model saying it ran, tested or verified something.
var claimedAction = regexp.MustCompile(`(?i)\b(i|i've|i have|we|we've|we have)\s+(just\s+|now\s+|already\s+|successfully\s+)?` +
	`(ran|run|executed|tested|verified|checked|confirmed|built|compiled|installed|deployed)\b` +
	`|\b(all\s+)?(the\s+)?tests?\s+(now\s+)?(pass|passed|passes|are passing|succeeded)\b`)

// narrativeMismatch reports whether text says the agent ran, tested or verified something
// although no tool ran since its last turn and none is called in this one.
func narrativeMismatch(text string, stepsSinceLastTurn, callsNow int) (claim string, ok bool) {
	if stepsSinceLastTurn > 0 || callsNow > 0 {
		return "", false
	}
	m := claimedAction.FindString(text)
	return m, m != ""
}

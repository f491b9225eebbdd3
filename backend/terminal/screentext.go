package terminal

import (
	"regexp"
	"strings"
)

// screenLines is the set of the screen's current text lines (scrolled-off ones included).
func (t *tab) screenLines() map[string]bool {
	sc := t.scr.snapshot(t, false)
	set := make(map[string]bool, len(sc.Scrolled)+sc.Rows)
	for _, l := range sc.Lines() {
		set[l] = true
	}
	return set
}

// screenPrompt reports whether the screen's cursor sits after a prompt (see LooksLikePrompt),
// or, for a tab running an agent CLI, whether its recogniser sees it waiting for the person.
func (t *tab) screenPrompt() bool {
	sc := t.scr.snapshot(t, false)
	if r := t.recogniser(); r != nil {
		st := r.State(&sc)
		return st == AgentIdle || st == AgentAsking
	}
	return LooksLikePrompt(sc.BeforeCursor())
}

// matchScreen matches pattern against the screen's lines that were not there when input was
// last written (before), skipping lines holding a typed line (its echo). It finds what a
// program drew in place (moving the cursor, overwriting a spinner), which the raw output
// does not show as text.
func matchScreen(sc *Screen, before map[string]bool, input string, pattern *regexp.Regexp) (match, line string, ok bool) {
	var typed []string
	for l := range strings.SplitSeq(strings.ReplaceAll(input, "\r", "\n"), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			typed = append(typed, l)
		}
	}
	lines := sc.Lines()
	for i := len(lines) - 1; i >= 0; i-- { // newest first: the answer is near the cursor
		l := lines[i]
		if before[l] || strings.TrimSpace(l) == "" {
			continue
		}
		echo := false
		for _, ty := range typed {
			if strings.Contains(l, ty) {
				echo = true
				break
			}
		}
		if echo {
			continue
		}
		if loc := pattern.FindStringIndex(l); loc != nil && loc[1] > loc[0] {
			return l[loc[0]:loc[1]], l, true
		}
	}
	return "", "", false
}

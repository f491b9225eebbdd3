package terminal

import (
	"bytes"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A terminal shows what is typed into it: the shell's line editor (readline) or, in cooked
// mode, the kernel reproduces each typed line in the output, and Enter adds a newline. The
// output since an input therefore begins with the typed command line itself, and a wait for a
// pattern that also occurs in the command (`sleep 5; echo DONE`, waiting for DONE) would end
// on the echo, before the command ran. An echoFilter recognises the echoed lines so that waits
// look only at what the programs printed.
//
// Why it works the way it does:
//   - An echoed line is a line of output that ends with a typed line, preceded by nothing (the
//     prompt was printed before the input; dash and cooked-mode programs echo typeahead at
//     once) or by a prompt (bash and python print one before each later line they read: "$ ",
//     PS2's "> ", ">>> ", "... "). The newline after it is the echo of Enter.
//   - Lines are compared by their visible characters without whitespace, in the order the bytes
//     arrive rather than as drawn: readline wraps a long line at the pane's width by writing
//     " \r" at the margin, which a renderer such as Strip would draw over the start of the
//     line; ignoring whitespace and cursor controls makes the comparison independent of the
//     pane's width and of where the wrap falls.
//   - The typed lines are found in order, each only after the previous one: a line a program
//     reads with echo off (a password) or swallows (typeahead a running command reads) is never
//     echoed, so later lines may be found without it.
//   - Nothing found means nothing is left out: the output since the input counts whole, as it
//     did before, so programs that do not echo (full-screen programs, password prompts) are
//     judged by all their output.
//   - The last line, not yet ended, is held back while it is a prompt and the start of an
//     expected echo: the echo may still be arriving, or was typed without Enter.
//   - Not simply "skip to the first newline after the input": a program that does not echo
//     would lose its first line of output, or all of it if it draws with cursor moves and no
//     newline; and bash echoes each of several typed lines only when it reads it, after the
//     output of the line before. Enter alone (typed text is empty) does reduce to that rule:
//     its echo is the first line, when that line is blank or a prompt.
type echoFilter struct {
	keys    []echoKey // the lines typed with Enter, then the text typed after the last Enter
	entered int       // how many of keys were typed with Enter
	next    int       // index in keys of the first entered line whose echo is not found yet
	found   []span    // output ranges of the echoed lines found so far (line and its '\n'), in order
	judged  int64     // offset where the first line not yet judged begins
}

// echoKey is one typed line: its visible characters without whitespace.
type echoKey struct {
	runes []rune
	fail  []int // KMP failure function of runes, built when first needed
}

type span struct{ from, to int64 }

// maxEchoInput bounds the typed input kept to recognise its echo: a command, or a script of a
// few hundred lines, fits; a longer input (a pasted file) is kept up to its last Enter within
// the bound, and the echo of the rest counts as output.
const maxEchoInput = 8 << 10

// maxEchoPrompt bounds how much of a line before an echo is looked at to decide whether it is
// a prompt, so a huge line cannot make the check slow.
const maxEchoPrompt = 512

// maxEchoCandidates bounds how many ways of splitting the last line into a prompt and the start
// of an echo are tried (for a line like "aaa" and a key "aaaa" there are several).
const maxEchoCandidates = 4

// keptInput is the part of an input kept to recognise its echo.
func keptInput(data []byte) string {
	if len(data) <= maxEchoInput {
		return string(data)
	}
	data = data[:maxEchoInput]
	i := bytes.LastIndexAny(data, "\r\n")
	return string(data[:i+1]) // i == -1: nothing
}

// newEchoFilter prepares to find the echo of input in the output from offset since on.
func newEchoFilter(input string, since int64) *echoFilter {
	e := &echoFilter{judged: max(since, 0)}
	b := []byte(keptInput([]byte(input)))
	var line []rune
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '\r' || c == '\n': // Enter (ctrl+j is one too)
			e.keys = append(e.keys, echoKey{runes: line})
			line = nil
			i++
		case c == 0x1b: // keys such as arrows and bracketed-paste marks echo as nothing
			n, _, _ := escapeLen(b[i:])
			if n == 0 {
				i = len(b)
				continue
			}
			i += n
		case c < 0x20 || c == 0x7f:
			i++ // tab, ctrl+keys and backspace do not echo as themselves
		default:
			r, size := utf8.DecodeRune(b[i:])
			if !unicode.IsSpace(r) && (r < 0x80 || r > 0x9f) {
				line = append(line, r)
			}
			i += size
		}
	}
	e.entered = len(e.keys)
	if len(line) > 0 {
		e.keys = append(e.keys, echoKey{runes: line})
	}
	return e
}

// done reports whether the echo of every line typed with Enter has been found.
func (e *echoFilter) done() bool { return e.next >= e.entered }

// scan judges the lines of window (the output from offset base on) that ended since the last
// scan, recording those that are echoes.
func (e *echoFilter) scan(window []byte, base int64) {
	e.judged = max(e.judged, base) // output before base is gone: its lines cannot be judged
	for !e.done() {
		rel := e.judged - base
		if rel >= int64(len(window)) {
			return
		}
		i := bytes.IndexByte(window[rel:], '\n')
		if i < 0 {
			return
		}
		line := window[rel : rel+int64(i)]
		if k, ok := e.match(line); ok {
			e.found = append(e.found, span{e.judged, e.judged + int64(i) + 1})
			e.next = k + 1
		}
		e.judged += int64(i) + 1
	}
}

// match reports which expected entered line, if any, line is the echo of. An empty typed line
// (Enter alone) matches only as the very next one: every blank line would match it.
func (e *echoFilter) match(line []byte) (int, bool) {
	v := visibleOf(line)
	for k := e.next; k < e.entered; k++ {
		key := e.keys[k].runes
		if len(key) == 0 && k > e.next {
			continue
		}
		n := len(v.solid)
		if len(key) > n || !slices.Equal(v.solid[n-len(key):], key) {
			continue
		}
		at := len(v.runes)
		if len(key) > 0 {
			at = v.pos[n-len(key)]
		}
		if echoPrompt(v.runes[:at]) {
			return k, true
		}
	}
	return 0, false
}

// visible is the window without the echoed lines found by scan, and without its unfinished
// last line while that may be an echo still arriving. Call scan first.
func (e *echoFilter) visible(window []byte, base int64) []byte {
	tail := int64(len(window))
	if last := int64(bytes.LastIndexByte(window, '\n') + 1); last < tail && e.holds(window[last:]) {
		tail = last
	}
	if len(e.found) == 0 {
		return window[:tail]
	}
	out := make([]byte, 0, tail)
	pos := int64(0)
	for _, s := range e.found {
		from, to := min(max(s.from-base, 0), tail), min(max(s.to-base, 0), tail)
		if from > pos {
			out = append(out, window[pos:from]...)
		}
		pos = max(pos, to)
	}
	return append(out, window[pos:tail]...)
}

// holds reports whether line, the unfinished last line, is a prompt (or nothing) followed by
// the start of a typed line whose echo is not found yet.
func (e *echoFilter) holds(line []byte) bool {
	v := visibleOf(line)
	if len(v.solid) == 0 {
		return false
	}
	for k := e.next; k < len(e.keys); k++ {
		key := &e.keys[k]
		if len(key.runes) == 0 {
			continue
		}
		if key.fail == nil {
			key.fail = failure(key.runes)
		}
		// m runs through the lengths of the line's endings that begin the key, longest first.
		m := overlap(v.solid[max(len(v.solid)-len(key.runes), 0):], key.runes, key.fail)
		for tries := 0; m > 0 && tries < maxEchoCandidates; tries++ {
			if echoPrompt(v.runes[:v.pos[len(v.solid)-m]]) {
				return true
			}
			m = key.fail[m-1]
		}
	}
	return false
}

// echoPrompt reports whether text, what precedes an echo on its line, is nothing or a prompt.
// Python's continuation prompt "... " counts here, though not for LooksLikePrompt: at the end
// of the output, "... " is more often progress than a prompt.
func echoPrompt(text []rune) bool {
	text = text[max(len(text)-maxEchoPrompt, 0):]
	s := string(text)
	trimmed := strings.TrimSpace(s)
	return trimmed == "" || trimmed == "..." || LooksLikePrompt(s)
}

// visibleLine is a line's visible characters in the order they arrived, and the positions in
// runes of those that are not whitespace.
type visibleLine struct {
	runes []rune
	solid []rune // runes without whitespace
	pos   []int  // pos[i] is the index in runes of solid[i]
}

// visibleOf drops escape sequences and control characters from raw output, as Strip does, but
// applies no cursor movement: an echo is compared as typed, wherever the terminal drew it.
func visibleOf(b []byte) visibleLine {
	var v visibleLine
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == 0x1b:
			n, _, _ := escapeLen(b[i:])
			if n == 0 {
				return v
			}
			i += n
		case c == '\t':
			v.runes = append(v.runes, ' ')
			i++
		case c < 0x20 || c == 0x7f:
			i++
		default:
			if !utf8.FullRune(b[i:]) {
				return v // a character cut off at the end of what has arrived
			}
			r, size := utf8.DecodeRune(b[i:])
			i += size
			if r >= 0x80 && r <= 0x9f {
				continue
			}
			if !unicode.IsSpace(r) {
				v.solid = append(v.solid, r)
				v.pos = append(v.pos, len(v.runes))
			}
			v.runes = append(v.runes, r)
		}
	}
	return v
}

// failure is the KMP failure function of key: fail[i] is the length of the longest proper
// prefix of key[:i+1] that is also its suffix.
func failure(key []rune) []int {
	fail := make([]int, len(key))
	for i, k := 1, 0; i < len(key); i++ {
		for k > 0 && key[i] != key[k] {
			k = fail[k-1]
		}
		if key[i] == key[k] {
			k++
		}
		fail[i] = k
	}
	return fail
}

// overlap is the length of the longest ending of s that is a beginning of key.
func overlap(s, key []rune, fail []int) int {
	m := 0
	for _, r := range s {
		for m > 0 && (m == len(key) || key[m] != r) {
			m = fail[m-1]
		}
		if key[m] == r {
			m++
		}
	}
	return m
}

package terminal

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// Strip turns raw terminal output into the text a person would read: escape sequences (CSI,
// OSC, DCS/SOS/PM/APC strings, charset and other two-byte ESC sequences) are removed, and
// carriage returns, backspaces, cursor moves along the line (CSI C, D, G) and line erases
// (CSI K) are applied, so a progress bar redrawn with "\r" leaves only its final state. Lines
// end with "\n"; cursor moves between lines are not modelled, so full-screen programs read as
// the text they drew, in the order they drew it. An escape sequence cut off at the end of b
// is dropped.
func Strip(b []byte) string {
	var out strings.Builder
	out.Grow(len(b))
	var line []rune
	col := 0
	put := func(r rune) {
		for len(line) < col {
			line = append(line, ' ')
		}
		if col < len(line) {
			line[col] = r
		} else {
			line = append(line, r)
		}
		col++
	}
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '\n':
			out.WriteString(string(line))
			out.WriteByte('\n')
			line, col = line[:0], 0
			i++
		case c == '\r':
			col = 0
			i++
		case c == '\b':
			col = max(col-1, 0)
			i++
		case c == '\t':
			put('\t')
			i++
		case c == 0x1b:
			n, final, params := escapeLen(b[i:])
			if n == 0 { // cut off at the end
				i = len(b)
				continue
			}
			switch final {
			case 'K':
				switch firstParam(params, 0) {
				case 0:
					line = line[:min(col, len(line))]
				case 1:
					for k := 0; k < min(col+1, len(line)); k++ {
						line[k] = ' '
					}
				case 2:
					line = line[:0]
				}
			case 'C':
				col += max(firstParam(params, 1), 1)
			case 'D':
				col = max(col-max(firstParam(params, 1), 1), 0)
			case 'G':
				col = max(firstParam(params, 1)-1, 0)
			}
			i += n
		case c < 0x20 || c == 0x7f:
			i++ // other C0 controls (BEL, SO, SI, …) draw nothing
		default:
			r, size := utf8.DecodeRune(b[i:])
			if r >= 0x80 && r <= 0x9f {
				i += size // C1 controls draw nothing either
				continue
			}
			put(r)
			i += size
		}
	}
	out.WriteString(string(line))
	return out.String()
}

// escapeLen measures the escape sequence at the start of b (b[0] == ESC). It returns its
// length (0 when b ends inside it), and for CSI sequences the final byte and the parameters.
func escapeLen(b []byte) (n int, final byte, params []byte) {
	if len(b) < 2 {
		return 0, 0, nil
	}
	switch b[1] {
	case '[': // CSI: parameters 0x30–0x3F, intermediates 0x20–0x2F, final 0x40–0x7E
		for i := 2; i < len(b); i++ {
			if b[i] >= 0x40 && b[i] <= 0x7e {
				if b[2] >= '<' && b[2] <= '?' { // private modes (?25h, >c, …) do not move the cursor
					return i + 1, 0, nil
				}
				return i + 1, b[i], b[2:i]
			}
			if b[i] < 0x20 || b[i] > 0x7e {
				return i + 1, 0, nil // malformed: stop at the stray byte
			}
		}
		return 0, 0, nil
	case ']', 'P', 'X', '^', '_': // OSC, DCS, SOS, PM, APC: a string ended by BEL or ST (ESC \)
		for i := 2; i < len(b); i++ {
			if b[i] == 0x07 {
				return i + 1, 0, nil
			}
			if b[i] == 0x1b && i+1 < len(b) && b[i+1] == '\\' {
				return i + 2, 0, nil
			}
		}
		return 0, 0, nil
	case '(', ')', '*', '+', '-', '.', '/', '#', '%', ' ': // charset designation and friends: one more byte
		if len(b) < 3 {
			return 0, 0, nil
		}
		return 3, 0, nil
	default: // two-byte sequences: ESC 7, ESC 8, ESC =, ESC >, ESC M, ESC c, …
		return 2, 0, nil
	}
}

// firstParam reads the first numeric parameter of a CSI sequence, or def when it is absent.
func firstParam(params []byte, def int) int {
	n, seen := 0, false
	for _, c := range params {
		if c < '0' || c > '9' {
			break
		}
		n, seen = n*10+int(c-'0'), true
		if n > 1<<16 {
			break
		}
	}
	if !seen {
		return def
	}
	return n
}

// titleScanner picks window titles (OSC 0 and OSC 2) out of a raw output stream that arrives
// in pieces, keeping only the little state a sequence split across reads needs.
type titleScanner struct {
	state int    // 0 text, 1 after ESC, 2 inside OSC, 3 inside OSC after ESC
	osc   []byte // the OSC body so far, capped at maxTitleOSC
}

// maxTitleOSC bounds the OSC body kept while scanning; longer sequences (OSC 52 clipboard
// payloads, images) are not titles and are skipped without being stored.
const maxTitleOSC = 512

// feed scans p and returns the last complete title it set, if any.
func (s *titleScanner) feed(p []byte) (title string, ok bool) {
	for i := 0; i < len(p); i++ {
		switch s.state {
		case 0:
			j := bytes.IndexByte(p[i:], 0x1b)
			if j < 0 {
				return title, ok
			}
			i += j
			s.state = 1
		case 1:
			if p[i] == ']' {
				s.state, s.osc = 2, s.osc[:0]
			} else {
				s.state = 0
				if p[i] == 0x1b {
					s.state = 1
				}
			}
		case 2, 3:
			c := p[i]
			if c == 0x07 || s.state == 3 && c == '\\' {
				if t, good := oscTitle(s.osc); good {
					title, ok = t, true
				}
				s.state = 0
				continue
			}
			if s.state == 3 { // ESC not followed by '\': the sequence was abandoned
				s.state = 0
				i--
				continue
			}
			if c == 0x1b {
				s.state = 3
				continue
			}
			if len(s.osc) < maxTitleOSC {
				s.osc = append(s.osc, c)
			}
		}
	}
	return title, ok
}

func oscTitle(body []byte) (string, bool) {
	if len(body) >= maxTitleOSC || len(body) < 2 || body[1] != ';' || body[0] != '0' && body[0] != '2' {
		return "", false
	}
	return strings.ToValidUTF8(Strip(body[2:]), ""), true
}

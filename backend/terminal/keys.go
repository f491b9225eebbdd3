package terminal

import (
	"strings"
	"unicode/utf8"
)

// namedKeys maps key names to the bytes an xterm-compatible terminal sends for them (normal
// cursor-key mode, which shells and most programs accept).
var namedKeys = map[string]string{
	"enter": "\r", "return": "\r",
	"esc": "\x1b", "escape": "\x1b",
	"tab":       "\t",
	"shift+tab": "\x1b[Z",
	"backspace": "\x7f",
	"space":     " ",
	"up":        "\x1b[A", "down": "\x1b[B", "right": "\x1b[C", "left": "\x1b[D",
	"home": "\x1b[H", "end": "\x1b[F",
	"pageup": "\x1b[5~", "pgup": "\x1b[5~", "pagedown": "\x1b[6~", "pgdn": "\x1b[6~",
	"delete": "\x1b[3~", "del": "\x1b[3~",
	"insert": "\x1b[2~", "ins": "\x1b[2~",
	"f1": "\x1bOP", "f2": "\x1bOQ", "f3": "\x1bOR", "f4": "\x1bOS",
	"f5": "\x1b[15~", "f6": "\x1b[17~", "f7": "\x1b[18~", "f8": "\x1b[19~",
	"f9": "\x1b[20~", "f10": "\x1b[21~", "f11": "\x1b[23~", "f12": "\x1b[24~",
}

// modifiedCursorKeys are the final bytes of the keys xterm reports with a modifier as
// CSI 1 ; <mod> <final> (ctrl+left is ESC [ 1 ; 5 D).
var modifiedCursorKeys = map[string]byte{"up": 'A', "down": 'B', "right": 'C', "left": 'D', "home": 'H', "end": 'F'}

// ctrlSymbols are the non-letter keys that have a control code.
var ctrlSymbols = map[string]byte{
	"@": 0x00, "space": 0x00, "2": 0x00, "[": 0x1b, "3": 0x1b, "\\": 0x1c, "4": 0x1c,
	"]": 0x1d, "5": 0x1d, "^": 0x1e, "6": 0x1e, "_": 0x1f, "7": 0x1f, "-": 0x1f, "?": 0x7f, "8": 0x7f,
}

// KeySequence returns the bytes for a key name: enter, esc, tab, backspace, space, up, down,
// left, right, home, end, pageup, pagedown, delete, insert, f1–f12, shift+tab, ctrl+<key> and
// alt+<key> (names are case-insensitive; the character after alt+ keeps its case). ok is false
// when name is not a key name, and then it is text to type.
func KeySequence(name string) (seq []byte, ok bool) {
	lower := strings.ToLower(strings.TrimSpace(name))
	if s, ok := namedKeys[lower]; ok {
		return []byte(s), true
	}
	switch {
	case strings.HasPrefix(lower, "ctrl+"):
		key := lower[len("ctrl+"):]
		if len(key) == 1 && key[0] >= 'a' && key[0] <= 'z' {
			return []byte{key[0] - 'a' + 1}, true
		}
		if c, ok := ctrlSymbols[key]; ok {
			return []byte{c}, true
		}
		if f, ok := modifiedCursorKeys[key]; ok {
			return []byte{0x1b, '[', '1', ';', '5', f}, true
		}
	case strings.HasPrefix(lower, "alt+"):
		key := strings.TrimSpace(name)[len("alt+"):] // keep the case: alt+B is not alt+b
		if r, size := utf8.DecodeRuneInString(key); size == len(key) && r != utf8.RuneError && key != "" {
			return append([]byte{0x1b}, key...), true
		}
		lk := strings.ToLower(key)
		if f, ok := modifiedCursorKeys[lk]; ok {
			return []byte{0x1b, '[', '1', ';', '3', f}, true
		}
		if s, ok := namedKeys[lk]; ok {
			return append([]byte{0x1b}, s...), true
		}
		if inner, ok := KeySequence("ctrl+" + strings.TrimPrefix(lk, "ctrl+")); ok && strings.HasPrefix(lk, "ctrl+") {
			return append([]byte{0x1b}, inner...), true
		}
	case strings.HasPrefix(lower, "shift+"):
		if f, ok := modifiedCursorKeys[lower[len("shift+"):]]; ok {
			return []byte{0x1b, '[', '1', ';', '2', f}, true
		}
	}
	return nil, false
}

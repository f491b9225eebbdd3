package goal

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

// MaxTextBytes bounds a goal's text and every other text a goal or a fleet file gives: a real
// goal is a few paragraphs; 64 KiB is far above any, and a 5 MB one is a mistake (a file pasted
// in the wrong place) that would fill every prompt of the run.
const MaxTextBytes = 64 << 10

// CheckText refuses text a person cannot have meant: longer than MaxTextBytes, not UTF-8, or with
// control characters (a NUL, an escape sequence). multiline allows new lines and tabs, as a goal
// has; a name or an id has neither.
func CheckText(s string, multiline bool) error {
	if len(s) > MaxTextBytes {
		return fmt.Errorf("is %d bytes; at most %d (64 KiB): say what to achieve and point at files for the rest", len(s), MaxTextBytes)
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("is not UTF-8 text")
	}
	for i, r := range s {
		if multiline && (r == '\n' || r == '\t' || r == '\r') {
			continue
		}
		if unicode.IsControl(r) {
			return fmt.Errorf("holds the control character %U at byte %d; remove it", r, i)
		}
	}
	return nil
}

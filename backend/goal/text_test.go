package goal

import (
	"strings"
	"testing"
)

func TestGoalTextIsRefusedWhenNoPersonMeantIt(t *testing.T) {
	for _, c := range []struct {
		text      string
		multiline bool
		want      string
	}{
		{strings.Repeat("x", 5<<20), true, "at most 65536"},
		{"build\x00it", true, "U+0000"},
		{"clear \x1b[2J", true, "U+001B"},
		{"two\nlines", false, "U+000A"},
		{"\xff\xfe", true, "not UTF-8"},
	} {
		err := CheckText(c.text, c.multiline)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%.20q: %v, want %q", c.text, err, c.want)
		}
	}
	for _, ok := range []string{"Write ok into done.txt", "first\n\tthen\r\nlast", "ünïcödé — fine"} {
		if err := CheckText(ok, true); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
}

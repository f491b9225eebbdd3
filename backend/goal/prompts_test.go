package goal

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCutResultKeepsHeadAndTail(t *testing.T) {
	short := strings.Repeat("a", 100)
	if cutResult(short, 0) != short {
		t.Fatal("a short result was cut")
	}
	long := "HEAD" + strings.Repeat("é", 5000) + "TAIL"
	got := cutResult(long, 0)
	if !strings.HasPrefix(got, "HEAD") || !strings.HasSuffix(got, "TAIL") || !strings.Contains(got, "characters cut") {
		t.Fatalf("cut: %q…", got[:80])
	}
	if len(got) > toolResultHead+toolResultTail+200 || !utf8.ValidString(got) {
		t.Fatalf("cut result is %d bytes, valid UTF-8 %v", len(got), utf8.ValidString(got))
	}
}

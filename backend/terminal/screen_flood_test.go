package terminal

import (
	"fmt"
	"testing"
	"time"
)

// A read soon after a read that skipped a flood skips the lines still pouring in (they would
// scroll off unread); a few lines, or lines after the flood has been quiet for floodHold, are
// followed exactly, the lines they scroll off kept.
func TestScreenFloodHold(t *testing.T) {
	tb := &tab{sb: newScrollback(0, 0), cols: 80, rows: 24}
	s := newScreen(80, 24)
	defer s.close()
	next := 1
	print := func(lines int) {
		for range lines {
			tb.sb.write(fmt.Appendf(nil, "line %d\r\n", next))
			next++
		}
	}
	read := func() Screen {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.catchUp(tb)
		return s.read(false)
	}
	check := func(step string, sc Screen, minScrolled, maxScrolled int) {
		t.Helper()
		if got, want := sc.Row(sc.CursorY-1), fmt.Sprintf("line %d", next-1); got != want {
			t.Errorf("%s: the row above the cursor is %q, want %q", step, got, want)
		}
		if n := len(sc.Scrolled); n < minScrolled || n > maxScrolled {
			t.Errorf("%s: %d lines scrolled off, want %d to %d", step, n, minScrolled, maxScrolled)
		}
	}
	print(40000) // about 500 KB: a flood
	check("the flood", read(), 0, 2)
	print(100)
	check("more of it at once", read(), 0, 2)
	print(5)
	check("a few lines", read(), 5, 7)
	time.Sleep(floodHold)
	print(100)
	check("after the hold", read(), 100, 107)
}

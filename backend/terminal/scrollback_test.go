package terminal

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

func TestScrollbackKeepsTheLastLines(t *testing.T) {
	t.Parallel()
	s := newScrollback(3, 1<<20)
	for i := 1; i <= 5; i++ {
		s.write(fmt.Appendf(nil, "line %d\n", i))
	}
	s.write([]byte("partial"))
	if got := string(s.snapshot()); got != "line 3\nline 4\nline 5\npartial" {
		t.Fatalf("snapshot %q", got)
	}
	if s.end != int64(len("line 1\n")*5+len("partial")) {
		t.Fatalf("end %d: the cursor must count every byte ever written", s.end)
	}
	if got := string(s.read(s.tailStart(2), s.end)); got != "line 5\npartial" {
		t.Fatalf("tail 2 with a partial line: %q", got)
	}
	s.write([]byte("\n"))
	if got := string(s.read(s.tailStart(2), s.end)); got != "line 5\npartial\n" {
		t.Fatalf("tail 2 ending in a newline: %q", got)
	}
	if got := string(s.read(s.tailStart(50), s.end)); got != string(s.snapshot()) {
		t.Fatalf("tail beyond the kept lines: %q", got)
	}
}

func TestScrollbackByteCapAcrossBlocks(t *testing.T) {
	t.Parallel()
	const maxBytes = 3*scrollbackBlock + 100
	s := newScrollback(1_000_000, maxBytes)
	var all bytes.Buffer
	line := strings.Repeat("x", 99) + "\n"
	for range 2000 { // 200 KB through a ~49 KB ring
		s.write([]byte(line))
		all.WriteString(line)
	}
	if s.size() > maxBytes || s.size() < maxBytes-lineSnap {
		t.Fatalf("kept %d bytes, cap %d", s.size(), maxBytes)
	}
	if !bytes.Equal(s.snapshot(), all.Bytes()[s.start:]) {
		t.Fatal("the kept bytes are not the newest output")
	}
	if s.start%100 != 0 {
		t.Fatalf("the ring cut inside a line at %d", s.start)
	}
	if len(s.blocks) > maxBytes/scrollbackBlock+2 {
		t.Fatalf("%d blocks held for %d bytes: old blocks are not freed", len(s.blocks), s.size())
	}
	// A line longer than the cap is cut at the byte cap itself.
	s.write(bytes.Repeat([]byte("y"), 2*maxBytes))
	if s.size() != maxBytes {
		t.Fatalf("kept %d bytes of an endless line, want %d", s.size(), maxBytes)
	}
}

func TestScrollbackPagingByCursor(t *testing.T) {
	t.Parallel()
	s := newScrollback(100, 1<<20)
	for i := range 10 {
		s.write(fmt.Appendf(nil, "%d\n", i))
	}
	next := s.linesFrom(0, 3)
	if got := string(s.read(0, next)); got != "0\n1\n2\n" {
		t.Fatalf("page 1 %q", got)
	}
	if got := string(s.read(next, s.linesFrom(next, 3))); got != "3\n4\n5\n" {
		t.Fatalf("page 2 %q", got)
	}
	if s.linesFrom(s.linesFrom(0, 9), 5) != s.end {
		t.Fatal("the last page must end at the end of the output")
	}
}

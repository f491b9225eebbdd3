package terminal

import "testing"

func TestTitleScannerAcrossReads(t *testing.T) {
	t.Parallel()
	var s titleScanner
	stream := "\x1b[1mbold\x1b[0m\x1b]0;user@host: ~/src\x07$ ls\r\n\x1b]2;vim main.go\x1b\\\x1b]52;c;aGVsbG8=\x07"
	var titles []string
	for i := range len(stream) { // one byte per read: the worst split
		if title, ok := s.feed([]byte{stream[i]}); ok {
			titles = append(titles, title)
		}
	}
	if len(titles) != 2 || titles[0] != "user@host: ~/src" || titles[1] != "vim main.go" {
		t.Fatalf("titles %q", titles)
	}
	if title, ok := s.feed([]byte(stream)); !ok || title != "vim main.go" {
		t.Fatalf("whole stream: %q, %v (want the last title)", title, ok)
	}
}

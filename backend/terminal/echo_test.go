package terminal

import (
	"strings"
	"testing"
)

// The outputs below were recorded from real shells and programs in a PTY (bash 5.2 with its
// default prompt and bracketed paste, dash, python 3 with readline); the tests of the tools
// run the same situations live.
func TestEchoFilter(t *testing.T) {
	t.Parallel()
	const prompt = "\x1b[?2004hroot@vm:/tmp/exp# "
	long := "echo " + strings.Repeat("a", 57) + " TAILDONE"
	for _, tc := range []struct {
		name, input, output string
		want                string // what a pattern is matched against
		done                bool   // every entered line's echo was found
		// hidden is text that must not show in the visible text of any prefix of the output
		// that ends before its last occurrence: the echo, partial or whole, never shows.
		hidden string
	}{
		{"bash: the pattern in the command", "sleep 1; echo DONE\r",
			"sleep 1; echo DONE\r\n\x1b[?2004l\rDONE\r\n" + prompt,
			"DONE\nroot@vm:/tmp/exp# ", true, "DONE"},
		{"bash: the command still runs", "sleep 1; echo DONE\r",
			"sleep 1; echo DONE\r\n\x1b[?2004l\r", "", true, ""},
		{"bash: the echo has not ended yet", "sleep 1; echo DONE\r", "sleep 1; echo DONE", "", false, ""},
		{"bash: typed without Enter", "sleep 1; echo DONE", "sleep 1; echo DONE", "", true, ""},
		{"bash: Enter alone, after typing by hand", "\r",
			"\r\n\x1b[?2004l\rbuild ok\r\n" + prompt, "build ok\nroot@vm:/tmp/exp# ", true, ""},
		{"no input: everything counts", "", "DONE\r\n$ ", "DONE\n$ ", true, ""},
		{"a late prompt before the echo", "make\r", prompt + "make\r\n\x1b[?2004l\rok\r\n", "ok\n", true, "make"},
		// Typed a key at a time, readline wraps at the margin with " \r" (here 40 columns);
		// Strip would draw the tail over the start of the line.
		{"bash: an echo wrapped at the pane's width", long + "\r",
			"echo aaaaaaaaaaaaaaaaa \raaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa \r TAILDONE\r\n\x1b[?2004l\r" +
				strings.Repeat("a", 57) + " TAILDONE\r\n" + prompt,
			strings.Repeat("a", 57) + " TAILDONE\nroot@vm:/tmp/exp# ", true, "TAILDONE"},
		{"bash: two commands", "echo a\recho b\r",
			"echo a\r\n\x1b[?2004l\ra\r\n" + prompt + "echo b\r\n\x1b[?2004l\rb\r\n" + prompt,
			"a\nb\nroot@vm:/tmp/exp# ", true, "echo"},
		{"bash: the second line not echoed yet", "echo a\recho b\r",
			"echo a\r\n\x1b[?2004l\ra\r\n" + prompt, "a\nroot@vm:/tmp/exp# ", false, ""},
		{"bash: the second line half echoed", "echo a\recho b\r",
			"echo a\r\n\x1b[?2004l\ra\r\n" + prompt + "ech", "a\n", false, ""},
		{"bash: continuation lines after PS2", "for i in 1 2; do\recho x$i\rdone\r",
			"for i in 1 2; do\r\n\x1b[?2004l\r\x1b[?2004h> echo x$i\r\n\x1b[?2004l\r\x1b[?2004h> done\r\n\x1b[?2004l\rx1\r\nx2\r\n" + prompt,
			"x1\nx2\nroot@vm:/tmp/exp# ", true, "$i"},
		{"dash: the kernel echoes typeahead at once", "for i in 1 2; do\recho x$i\rdone\r",
			"for i in 1 2; do\r\necho x$i\r\ndone\r\n> > x1\r\nx2\r\n# ", "> > x1\nx2\n# ", true, "$i"},
		{"python: >>> and ... prompts", "print(6*7)\rif 1:\r  print(2)\r\r",
			"print(6*7)\r\n42\r\n>>> if 1:\r\n...   print(2)\r\n... \r\n2\r\n>>> ", "42\n2\n>>> ", true, "print"},
		{"a password is not echoed", "secret\r", "\r\nok\r\n>>> ", "\nok\n>>> ", false, ""},
		{"cat in cooked mode: the echo, then cat's copy", "hello DONE\r", "hello DONE\r\nhello DONE\r\n", "hello DONE\n", true, ""},
		{"output that ends like the command is output", "echo hi\r", "echo hi\r\nsay: echo hi\r\n", "say: echo hi\n", true, ""},
		{"a full-screen program that does not echo", "q", "\x1b[H\x1b[2J\x1b[1;1Hpress q", "\x1b[H\x1b[2J\x1b[1;1Hpress q", true, ""},
		{"a coloured prompt and a bracketed paste", "\x1b[200~ls  -l\x1b[201~\r",
			"ls  -l\r\nfile\r\n\x1b[01;32mme@host\x1b[00m:\x1b[01;34m~\x1b[00m$ ", "file\nme@host:~$ ", true, ""},
	} {
		e := newEchoFilter(tc.input, 0)
		out := []byte(tc.output)
		e.scan(out, 0)
		if got := Strip(e.visible(out, 0)); got != Strip([]byte(tc.want)) {
			t.Errorf("%s: visible %q, want %q", tc.name, got, Strip([]byte(tc.want)))
		}
		if e.done() != tc.done {
			t.Errorf("%s: done %v, want %v", tc.name, e.done(), tc.done)
		}

		// The output arriving a byte at a time ends the same, and never shows the echo.
		e = newEchoFilter(tc.input, 0)
		last := strings.LastIndex(tc.output, tc.hidden)
		for n := 1; n <= len(out); n++ {
			e.scan(out[:n], 0)
			got := Strip(e.visible(out[:n], 0))
			if tc.hidden != "" && n < last+len(tc.hidden) && strings.Contains(got, tc.hidden) {
				t.Errorf("%s: after %d bytes %q shows in %q", tc.name, n, tc.hidden, got)
				break
			}
			if n == len(out) && got != Strip([]byte(tc.want)) {
				t.Errorf("%s: byte by byte: visible %q, want %q", tc.name, got, Strip([]byte(tc.want)))
			}
		}
	}
}

func TestEchoFilterKeepsWorkingWhenTheWindowSlides(t *testing.T) {
	t.Parallel()
	e := newEchoFilter("make\r", 100)
	out := []byte("make\r\nbuilding\r\n")
	e.scan(out, 100)
	// Later the window starts after the echo (the output grew past the pattern window).
	more := append(out[6:], "DONE\r\n"...)
	e.scan(more, 106)
	if got := Strip(e.visible(more, 106)); got != "building\nDONE\n" {
		t.Fatalf("visible %q", got)
	}
}

func TestKeptInputCutsAtAnEnter(t *testing.T) {
	t.Parallel()
	line := strings.Repeat("x", 1000) + "\r"
	in := strings.Repeat(line, 10) // 10,010 bytes: over the bound
	got := keptInput([]byte(in))
	if len(got) != 8*len(line) || !strings.HasSuffix(got, "\r") {
		t.Fatalf("kept %d bytes, want %d ending with Enter", len(got), 8*len(line))
	}
	if keptInput([]byte(strings.Repeat("y", maxEchoInput+1))) != "" {
		t.Fatal("a line longer than the bound should not be kept in part")
	}
}

package terminal_test

import (
	"bytes"
	"testing"

	"github.com/clusterspace/clusterspace/backend/terminal"
)

func TestStrip(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, in, want string }{
		{"plain", "hello\nworld", "hello\nworld"},
		{"crlf", "a\r\nb\r\n", "a\nb\n"},
		{"sgr colours", "\x1b[1;31mred\x1b[0m and \x1b[38;5;42mgreen\x1b[m", "red and green"},
		{"osc title with BEL", "\x1b]0;user@host: ~\x07$ ", "$ "},
		{"osc with ST", "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "link"},
		{"charset designation", "\x1b(Bascii\x1b)0", "ascii"},
		{"dcs string", "a\x1bPq#0;2;0;0;0\x1b\\b", "ab"},
		{"private modes", "\x1b[?2004hprompt$ \x1b[?25l", "prompt$ "},
		{"two-byte escapes", "\x1b7saved\x1b8\x1b=\x1b>", "saved"},
		{"progress bar by CR", "10%\r50%\r100%\n", "100%\n"},
		{"CR overwrites only what it rewrites", "abcdef\rxy\n", "xycdef\n"},
		{"CR then erase line", "downloading 12%\r\x1b[Kdone\n", "done\n"},
		{"erase whole line", "junk\x1b[2K\rok", "ok"},
		{"backspace", "ab\bc", "ac"},
		{"readline rubout", "ls -x\b \bl", "ls -l"},
		{"cursor back and forward", "abc\x1b[2Dx\x1b[Cy", "axcy"},
		{"column absolute", "hello\x1b[1Gj", "jello"},
		{"bell and other C0", "a\x07b\x0ec\x0f", "abc"},
		{"utf8 kept", "héllo ✓ 世界", "héllo ✓ 世界"},
		{"C1 control as utf8 dropped", "a\u009bb", "ab"},
		{"escape cut off at the end", "text\x1b[1;3", "text"},
		{"osc cut off at the end", "text\x1b]0;tit", "text"},
		{"lone esc at the end", "text\x1b", "text"},
		{"tab kept", "a\tb", "a\tb"},
	} {
		if got := terminal.Strip([]byte(tc.in)); got != tc.want {
			t.Errorf("%s: Strip(%q) = %q, want %q", tc.name, tc.in, got, tc.want)
		}
	}
}

func TestLooksLikePrompt(t *testing.T) {
	t.Parallel()
	for line, want := range map[string]bool{
		"$ ":                                    true,
		"user@host:~/src/app$ ":                 true,
		"root@vm:/tmp# ":                        true,
		"[user@host dir]$ ":                     true,
		"(venv) user@host:~$ ":                  true,
		"host% ":                                true,
		">>> ":                                  true,
		"mysql> ":                               true,
		"PS C:\\Users\\me> ":                    true,
		"~/src ❯ ":                              true,
		"➜  app git:(main) ➜":                   true,
		"[sudo] password for me: ":              true,
		"Enter passphrase for key 'k': ":        true,
		"Continue? [Y/n] ":                      true,
		"Are you sure (yes/no/[fingerprint])? ": true,
		"":                                      false,
		"building...":                           false,
		"50% ":                                  false,
		"total 12":                              false,
		"price: $":                              false,
		"# comment without space":               false,
		// The idle input lines of the coding agents people launch in panes.
		"│ >                                    │": true, // Claude Code's boxed input
		"│ > ":        true,
		"› ":          true, // Codex CLI
		"▌ ":          true,
		"aider> ":     true,
		"architect> ": true,
		"│ building the project…               │": false, // a box line that is not an input
		"›": false,
	} {
		if got := terminal.LooksLikePrompt(line); got != want {
			t.Errorf("LooksLikePrompt(%q) = %v, want %v", line, got, want)
		}
	}
}

func TestKeySequence(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]string{
		"enter": "\r", "Enter": "\r", "esc": "\x1b", "tab": "\t", "backspace": "\x7f", "space": " ",
		"up": "\x1b[A", "down": "\x1b[B", "right": "\x1b[C", "left": "\x1b[D",
		"home": "\x1b[H", "end": "\x1b[F", "pageup": "\x1b[5~", "pagedown": "\x1b[6~",
		"delete": "\x1b[3~", "insert": "\x1b[2~",
		"f1": "\x1bOP", "f2": "\x1bOQ", "f3": "\x1bOR", "f4": "\x1bOS", "f5": "\x1b[15~", "f6": "\x1b[17~",
		"f7": "\x1b[18~", "f8": "\x1b[19~", "f9": "\x1b[20~", "f10": "\x1b[21~", "f11": "\x1b[23~", "f12": "\x1b[24~",
		"shift+tab": "\x1b[Z", "ctrl+c": "\x03", "CTRL+D": "\x04", "ctrl+a": "\x01", "ctrl+z": "\x1a",
		"ctrl+[": "\x1b", "ctrl+\\": "\x1c", "ctrl+space": "\x00", "ctrl+left": "\x1b[1;5D",
		"alt+b": "\x1bb", "alt+B": "\x1bB", "alt+.": "\x1b.", "alt+enter": "\x1b\r", "alt+left": "\x1b[1;3D",
		"shift+up": "\x1b[1;2A",
	} {
		got, ok := terminal.KeySequence(name)
		if !ok || !bytes.Equal(got, []byte(want)) {
			t.Errorf("KeySequence(%q) = %q, %v; want %q", name, got, ok, want)
		}
	}
	for _, text := range []string{"ls -la", "hello", "ctrl+", "ctrl+foo", "alt+", "f13", "enter please", "q"} {
		if seq, ok := terminal.KeySequence(text); ok {
			t.Errorf("KeySequence(%q) = %q: text taken for a key", text, seq)
		}
	}
}

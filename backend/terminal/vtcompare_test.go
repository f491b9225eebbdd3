package terminal

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/vt"
	"github.com/hinshun/vt10x"
)

// The comparison behind the choice of emulator (docs/measurements.md, "Terminal screen"): the
// same output fed to github.com/charmbracelet/x/vt, which the screen uses, and to
// github.com/hinshun/vt10x, the other candidate. The chosen one must get every case right;
// the other's results are logged, so a newer version of it can be judged by running this.

// candidate is one emulator library seen through what the cases check.
type candidate interface {
	write(s string)
	row(y int) string
	cursor() (x, y int)
	boldRed(x, y int) bool
	scrolledOff() []string // lines that scrolled off the top, oldest first (nil: not kept)
}

type charmVT struct{ e *vt.Emulator }

func newCharmVT(cols, rows int) candidate {
	e := vt.NewEmulator(cols, rows)
	e.SetScrollbackSize(screenScrollbackLines)
	return charmVT{e}
}

func (c charmVT) write(s string) { _, _ = c.e.WriteString(s) }
func (c charmVT) row(y int) string {
	var b strings.Builder
	for x := 0; x < c.e.Width(); x++ {
		if cell := c.e.CellAt(x, y); cell != nil {
			b.WriteString(cell.Content) // a wide char's second cell has no content
		}
	}
	return strings.TrimRight(b.String(), " ")
}
func (c charmVT) cursor() (int, int) { p := c.e.CursorPosition(); return p.X, p.Y }
func (c charmVT) boldRed(x, y int) bool {
	cell := c.e.CellAt(x, y)
	return cell != nil && cell.Style.Attrs&uv.AttrBold != 0 && cell.Style.Fg == ansi.Red
}
func (c charmVT) scrolledOff() []string {
	var out []string
	for _, l := range c.e.Scrollback().Lines() {
		out = append(out, l.String())
	}
	return out
}

type vt10xTerm struct{ t vt10x.Terminal }

func newVT10x(cols, rows int) candidate { return vt10xTerm{vt10x.New(vt10x.WithSize(cols, rows))} }

func (v vt10xTerm) write(s string) { _, _ = v.t.Write([]byte(s)) }
func (v vt10xTerm) row(y int) string {
	cols, _ := v.t.Size()
	var b strings.Builder
	for x := 0; x < cols; x++ {
		if r := v.t.Cell(x, y).Char; r != 0 {
			b.WriteRune(r)
		}
	}
	return strings.TrimRight(b.String(), " ")
}
func (v vt10xTerm) cursor() (int, int) { c := v.t.Cursor(); return c.X, c.Y }

// vt10xBold is vt10x's unexported attrBold (the third mode bit).
const vt10xBold = 1 << 2

func (v vt10xTerm) boldRed(x, y int) bool {
	g := v.t.Cell(x, y)
	return g.Mode&vt10xBold != 0 && (g.FG == 1 || g.FG == 9) // it draws bold red as bright red
}
func (v vt10xTerm) scrolledOff() []string { return nil }

// screenCase is output and what a correct terminal shows after it.
type screenCase struct {
	name  string
	input string
	check func(c candidate) error
}

func rowsAre(want ...string) func(c candidate) error {
	return func(c candidate) error {
		for y, w := range want {
			if got := c.row(y); got != w {
				return fmt.Errorf("row %d = %q, want %q", y, got, w)
			}
		}
		return nil
	}
}

var screenCases = []screenCase{
	{"cursor up and down", "line1\r\nline2\r\nline3\x1b[2A\rX\x1b[1BY", rowsAre("Xine1", "lYne2", "line3")},
	{"line redrawn in place", "✢ Working…\r\x1b[2KCC-FINISHED: the file is written.", rowsAre("CC-FINISHED: the file is written.")},
	{"alternate screen", "main\x1b[?1049h\x1b[Halt screen text\x1b[?1049l", rowsAre("main")},
	{"scroll region", "\x1b[5;1Hfooter\x1b[1;3r\x1b[1;1Ha\r\nb\r\nc\r\nd", rowsAre("b", "c", "d", "", "footer")},
	{"wide chars and emoji", "日本語x👍y", func(c candidate) error {
		if err := rowsAre("日本語x👍y")(c); err != nil {
			return err
		}
		if x, _ := c.cursor(); x != 10 {
			return fmt.Errorf("cursor column %d, want 10 (CJK and emoji take two cells)", x)
		}
		return nil
	}},
	{"colours and attributes", "a\x1b[1;31mR\x1b[0mb", func(c candidate) error {
		if !c.boldRed(1, 0) || c.boldRed(2, 0) {
			return fmt.Errorf("cell 1 bold red: %v, cell 2 bold red: %v; want true, false", c.boldRed(1, 0), c.boldRed(2, 0))
		}
		return nil
	}},
	{"scrollback keeps what scrolled off", strings.Repeat("x\r\n", 3) + "first gone\r\n" + strings.Repeat("y\r\n", 5), func(c candidate) error {
		if got := c.scrolledOff(); len(got) < 4 || got[3] != "first gone" {
			return fmt.Errorf("scrolled-off lines %q, want the 4th to be %q", got, "first gone")
		}
		return nil
	}},
}

func TestEmulatorCandidates(t *testing.T) {
	candidates := []struct {
		name   string
		new    func(cols, rows int) candidate
		chosen bool
	}{{"charmbracelet/x/vt", newCharmVT, true}, {"hinshun/vt10x", newVT10x, false}}
	for _, cand := range candidates {
		failed := 0
		for _, tc := range screenCases {
			c := cand.new(40, 5)
			c.write(tc.input)
			if err := tc.check(c); err != nil {
				failed++
				if cand.chosen {
					t.Errorf("%s, %s: %v", cand.name, tc.name, err)
				} else {
					t.Logf("%s, %s: %v", cand.name, tc.name, err)
				}
			}
		}
		t.Logf("%s: %d of %d cases right", cand.name, len(screenCases)-failed, len(screenCases))
	}
}

// emulatorWorkload is a mix of what panes print: coloured ls-like lines, a build log, and a
// TUI status line redrawn in place with cursor movement.
var emulatorWorkload = func() []byte {
	var b strings.Builder
	for i := range 200 {
		fmt.Fprintf(&b, "\x1b[01;34mdir%03d\x1b[0m  \x1b[01;32mrun.sh\x1b[0m  file-%d.go  README.md\r\n", i, i)
		fmt.Fprintf(&b, "ok  \tgithub.com/example/pkg%d\t0.%03ds\r\n", i, i)
		fmt.Fprintf(&b, "\x1b[2K\r\x1b[38;5;174m✢\x1b[39m Working… (%ds · esc to interrupt)\x1b[1A\x1b[1B", i)
	}
	return []byte(b.String())
}()

func BenchmarkEmulators(b *testing.B) {
	for _, cand := range []struct {
		name string
		new  func(cols, rows int) candidate
	}{{"charmbracelet-vt", newCharmVT}, {"vt10x", newVT10x}} {
		b.Run(cand.name, func(b *testing.B) {
			c := cand.new(120, 40)
			s := string(emulatorWorkload)
			b.SetBytes(int64(len(s)))
			for b.Loop() {
				c.write(s)
			}
		})
	}
}

// The screen agrees with tmux, a terminal emulator people use every day, on the recorded
// screens of the real agent CLIs: at every checkpoint of every recording, tmux is fed the same
// bytes and its rows are compared with the screen's. tmux answers the CLIs' queries into the
// pane's input, so the pane does not echo (stty -echo) and nothing reads it.
func TestScreenMatchesTmuxOnRecordings(t *testing.T) {
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Fatal("tmux is not installed: run scripts/setup.sh (it installs tmux for the SSH pane tests)")
	}
	dir := t.TempDir()
	sock := filepath.Join(dir, "tmux.sock")
	run := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(tmux, append([]string{"-S", sock}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	t.Cleanup(func() { _ = exec.Command(tmux, "-S", sock, "kill-server").Run() }) // Best effort.
	// A session that stays, so the server does not exit between the checkpoints' sessions.
	run("-f", "/dev/null", "new-session", "-d", "-s", "keep", "exec sleep 600")
	for _, name := range []string{"claude", "codex"} {
		rec, raw := loadRecording(t, name)
		for i, cp := range rec.Checkpoints {
			feed := filepath.Join(dir, fmt.Sprintf("%s-%d.raw", name, i))
			if err := os.WriteFile(feed, raw[:cp.Offset], 0o600); err != nil {
				t.Fatal(err)
			}
			session := fmt.Sprintf("%s-%d", name, i)
			signal := "fed-" + session
			run("new-session", "-d", "-s", session, "-x", fmt.Sprint(rec.Cols), "-y", fmt.Sprint(rec.Rows),
				fmt.Sprintf("stty -echo -opost; cat %s; %s -S %s wait-for -S %s; exec sleep 60", feed, tmux, sock, signal))
			run("wait-for", signal)
			want := strings.Split(strings.TrimRight(run("capture-pane", "-p", "-t", session), "\n"), "\n")
			run("kill-session", "-t", session)
			sc := screenAt(rec, raw, cp.Offset)
			got := sc.ScreenRows()
			for y := range max(len(want), len(got)) {
				w, g := "", ""
				if y < len(want) {
					w = strings.TrimRight(want[y], " ")
				}
				if y < len(got) {
					g = got[y]
				}
				if w != g {
					t.Errorf("%s at %d (%s), row %d:\n screen %q\n tmux   %q", name, cp.Offset, cp.Note, y, g, w)
				}
			}
		}
	}
}

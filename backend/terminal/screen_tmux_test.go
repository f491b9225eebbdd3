package terminal

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

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

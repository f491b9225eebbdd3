package criterion

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// testCtx is a test context that cannot hang a test forever.
func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func mustParse(t *testing.T, spec Spec, deps Deps) Criterion {
	t.Helper()
	c, err := Parse(spec, deps)
	if err != nil {
		t.Fatalf("Parse(%+v): %v", spec, err)
	}
	return c
}

func verify(t *testing.T, c Criterion, ev Evidence) Verdict {
	t.Helper()
	v, err := c.Verify(testCtx(t), ev)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	return v
}

func TestShellVerify(t *testing.T) {
	t.Parallel()
	type shellRun struct {
		command  string
		exitCode int
	}
	checkVerdicts(t, []verdictCase[shellRun]{
		{name: "exit 0 passes", in: shellRun{"true", 0}, pass: true, exact: "Shell exited 0, as wanted."},
		{name: "wanted code passes", in: shellRun{"exit 3", 3}, pass: true},
		{name: "zero fails when 3 is wanted", in: shellRun{"true", 3},
			exact: "Shell exited 0, wanted 3. Output tail:\n(no output)"},
		{name: "stderr tail wins over stdout", in: shellRun{"echo to-stdout; echo problem >&2; exit 1", 0},
			exact: "Shell exited 1, wanted 0. Output tail:\nproblem"},
		{name: "stdout tail when stderr is empty", in: shellRun{"for i in $(seq 1 10); do echo line$i; done; exit 2", 0},
			exact: "Shell exited 2, wanted 0. Output tail:\nline6\nline7\nline8\nline9\nline10"},
		{name: "last five lines of stderr", in: shellRun{"for i in 1 2 3 4 5 6 7; do echo e$i >&2; done; echo out; false", 0},
			exact: "Shell exited 1, wanted 0. Output tail:\ne3\ne4\ne5\ne6\ne7"},
		{name: "blank stderr counts as empty", in: shellRun{"echo '  ' >&2; echo only-stdout; exit 4", 0},
			exact: "Shell exited 4, wanted 0. Output tail:\nonly-stdout"},
		{name: "runs in the work dir", in: shellRun{"test -f marker.txt", 0}, pass: true},
		{name: "killed by a signal reports 128+N", in: shellRun{"kill -9 $$", 0},
			exact: "Shell exited 137, wanted 0. Output tail:\n(no output)"},
		{name: "a very long line is cut", in: shellRun{"head -c 5000 /dev/zero | tr '\\0' x; exit 1", 0}},
	}, func(t *testing.T, in shellRun) Verdict {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "marker.txt"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		c := mustParse(t, Spec{Kind: KindShell, Command: in.command, ExitCode: in.exitCode}, Deps{})
		v := verify(t, c, Evidence{WorkDir: dir})
		if len(v.Detail) > 1000 {
			t.Errorf("detail is %d bytes; the tail must be bounded", len(v.Detail))
		}
		return v
	})
}

func TestShellDescribe(t *testing.T) {
	t.Parallel()
	c := mustParse(t, Spec{Kind: KindShell, Command: "make test"}, Deps{})
	if got, want := c.Describe(), "the shell command `make test` exits with code 0 (timeout 2m0s)"; got != want {
		t.Errorf("Describe() = %q, want %q", got, want)
	}
	if c.Kind() != KindShell {
		t.Errorf("Kind() = %q", c.Kind())
	}
	c = mustParse(t, Spec{Kind: KindShell, Command: "grep -q x f", ExitCode: 1, Timeout: Duration(90 * time.Second)}, Deps{})
	if got, want := c.Describe(), "the shell command `grep -q x f` exits with code 1 (timeout 1m30s)"; got != want {
		t.Errorf("Describe() = %q, want %q", got, want)
	}
}

// processGone reports whether pid has exited (a zombie waiting for its reaper counts).
func processGone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z'
}

func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !processGone(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL) // Best effort: do not leave it behind.
			t.Fatalf("child process %d is still running", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func readPID(t *testing.T, dir string) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "child.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

func TestShellTimeoutKillsTheProcessGroup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := mustParse(t, Spec{Kind: KindShell, Command: "echo starting; sleep 300 & echo $! > child.pid; wait", Timeout: Duration(time.Second)}, Deps{})
	start := time.Now()
	v := verify(t, c, Evidence{WorkDir: dir})
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("Verify took %s after a 1s timeout", took)
	}
	if v.Passed {
		t.Fatal("a timed-out check passed")
	}
	want := "Shell timed out after 1s (wanted exit 0); its processes were killed. Output tail:\nstarting"
	if v.Detail != want {
		t.Errorf("detail:\n%q\nwant\n%q", v.Detail, want)
	}
	waitGone(t, readPID(t, dir))
}

func TestShellKillsBackgroundChildrenAfterExit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := mustParse(t, Spec{Kind: KindShell, Command: "sleep 300 & echo $! > child.pid; exit 0"}, Deps{})
	start := time.Now()
	v := verify(t, c, Evidence{WorkDir: dir})
	if !v.Passed {
		t.Fatalf("failed: %s", v.Detail)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Verify waited %s for a background child holding the output", took)
	}
	waitGone(t, readPID(t, dir))
}

func TestShellStoppedByContext(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := mustParse(t, Spec{Kind: KindShell, Command: "sleep 300 & echo $! > child.pid; wait"}, Deps{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go func() {
		// Abort once the child is running, as the runner does when the user aborts the goal.
		for ctx.Err() == nil {
			// The file exists from the redirect on; the pid is in it once echo has written it.
			if b, err := os.ReadFile(filepath.Join(dir, "child.pid")); err == nil && len(strings.TrimSpace(string(b))) > 0 {
				cancel()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	_, err := c.Verify(ctx, Evidence{WorkDir: dir})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	waitGone(t, readPID(t, dir))
}

func TestShellMissingWorkDirIsAnError(t *testing.T) {
	t.Parallel()
	c := mustParse(t, Spec{Kind: KindShell, Command: "true"}, Deps{})
	_, err := c.Verify(testCtx(t), Evidence{WorkDir: filepath.Join(t.TempDir(), "gone")})
	if err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Fatalf("err = %v, want one about the missing working dir", err)
	}
}

func TestShellOutputStaysBounded(t *testing.T) {
	t.Parallel()
	// 50 MB of output: only the tail is kept, and the detail shows its last lines.
	c := mustParse(t, Spec{Kind: KindShell, Command: "yes 'some output' | head -c 50000000; echo final >&2; exit 1"}, Deps{})
	v := verify(t, c, Evidence{WorkDir: t.TempDir()})
	if want := "Shell exited 1, wanted 0. Output tail:\nfinal"; v.Detail != want {
		t.Errorf("detail = %q, want %q", v.Detail, want)
	}
}

func TestTailKeepsTheLastBytes(t *testing.T) {
	t.Parallel()
	tl := newTail(8)
	for _, s := range []string{"abc", "defgh", "ijklmnopqrstu", "v", "wx"} {
		tl.Write([]byte(s))
		if len(tl.buf) > 2*8 {
			t.Fatalf("buffer grew to %d bytes", len(tl.buf))
		}
	}
	if got := string(tl.Bytes()); got != "qrstuvwx" {
		t.Errorf("Bytes() = %q, want %q", got, "qrstuvwx")
	}
	h := &head{n: 4}
	h.Write([]byte("ab"))
	h.Write([]byte("cdef"))
	if string(h.buf) != "abcd" || !h.overflow {
		t.Errorf("head = %q overflow=%v, want \"abcd\" true", h.buf, h.overflow)
	}
}

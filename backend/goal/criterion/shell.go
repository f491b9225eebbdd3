package criterion

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/clusterspace/clusterspace/backend/procfd"
)

const (
	// tailLines is how much output a failed shell check shows: enough for a test runner's
	// summary and the failing assertion, little enough to keep the model's context clean.
	tailLines = 5
	// tailBytes is what is kept of each output stream; the rest streams past, so a chatty
	// check cannot fill memory.
	tailBytes = 16 << 10
	// maxLineChars cuts one very long output line (minified JSON, a progress bar).
	maxLineChars = 400
	// drainGrace is how long to wait for output after the process group is killed; a
	// process that left the group (setsid) may hold the pipe, and is not waited for.
	drainGrace = 2 * time.Second
	// syntaxCheckTimeout bounds `bash -n` at Parse; it reads the command, it runs nothing.
	syntaxCheckTimeout = 5 * time.Second
)

// shell passes when `bash -c command` exits with the wanted code.
type shell struct {
	command  string
	exitCode int
	timeout  time.Duration
}

func parseShell(spec Spec) (Criterion, *FieldError) {
	if fe := onlyFields(spec, "command", "exitCode", "timeout"); fe != nil {
		return nil, fe
	}
	if strings.TrimSpace(spec.Command) == "" {
		return nil, fieldErr("command", "a shell check needs a command that exits 0 when the goal is done, e.g. \"make test\"")
	}
	if fe := checkBashSyntax("command", spec.Command); fe != nil {
		return nil, fe
	}
	if spec.ExitCode < 0 || spec.ExitCode > 255 {
		return nil, fieldErr("exitCode", "exit code %d cannot happen: use a code from 0 to 255", spec.ExitCode)
	}
	timeout, fe := checkTimeout(spec.Timeout)
	if fe != nil {
		return nil, fe
	}
	return shell{command: spec.Command, exitCode: spec.ExitCode, timeout: timeout}, nil
}

func (s shell) Kind() string { return KindShell }

func (s shell) Describe() string {
	return fmt.Sprintf("the shell command `%s` exits with code %d (timeout %s)", s.command, s.exitCode, s.timeout)
}

func (s shell) Verify(ctx context.Context, ev Evidence) (Verdict, error) {
	stdout, stderr := newTail(tailBytes), newTail(tailBytes)
	res, err := runBash(ctx, ev, s.command, s.timeout, stdout, stderr)
	if err != nil {
		return Verdict{}, err
	}
	tail := outputTail(stderr.Bytes(), stdout.Bytes())
	if res.timedOut {
		return Verdict{Detail: fmt.Sprintf("Shell timed out after %s (wanted exit %d); its processes were killed. Output tail:\n%s", s.timeout, s.exitCode, tail)}, nil
	}
	if res.exitCode != s.exitCode {
		return Verdict{Detail: fmt.Sprintf("Shell exited %d, wanted %d. Output tail:\n%s", res.exitCode, s.exitCode, tail)}, nil
	}
	return Verdict{Passed: true, Detail: fmt.Sprintf("Shell exited %d, as wanted.", res.exitCode)}, nil
}

// outputTail is the last tailLines lines of stderr, or of stdout if stderr is empty.
func outputTail(stderr, stdout []byte) string {
	out := stderr
	if len(bytes.TrimSpace(out)) == 0 {
		out = stdout
	}
	text := strings.TrimRight(string(out), "\r\n \t")
	if strings.TrimSpace(text) == "" {
		return "(no output)"
	}
	lines := strings.Split(text, "\n")
	if len(lines) > tailLines {
		lines = lines[len(lines)-tailLines:]
	}
	for i, l := range lines {
		l = strings.TrimRight(l, "\r")
		if r := []rune(l); len(r) > maxLineChars {
			l = string(r[:maxLineChars]) + "…"
		}
		lines[i] = l
	}
	return strings.Join(lines, "\n")
}

// checkBashSyntax refuses a command bash cannot parse, at goal start rather than at claim time.
// CheckShellSyntax refuses a command bash cannot parse (it runs nothing), for commands
// given outside a criterion, such as a fleet file's land check.
func CheckShellSyntax(command string) error {
	if fe := checkBashSyntax("command", command); fe != nil {
		return errors.New(fe.Msg)
	}
	return nil
}

func checkBashSyntax(field, command string) *FieldError {
	ctx, cancel := context.WithTimeout(context.Background(), syntaxCheckTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, "bash", "-n", "-c", command).CombinedOutput()
	if err == nil {
		return nil
	}
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) {
		return fieldErr(field, "cannot check the command with bash (%v): shell checks need bash installed", err)
	}
	msg := strings.TrimSpace(strings.ReplaceAll(string(out), "bash: -c: ", ""))
	return fieldErr(field, "bash cannot parse the command: %s: fix the command", msg)
}

// bashResult is how a bash run ended.
type bashResult struct {
	exitCode int  // bash's exit code; 128+N when a signal N killed it
	timedOut bool // the timeout killed the process group
}

// runBash runs `bash -c command` in the evidence's work dir (inside the goal's sandbox when
// ev.Confine is set), in a process group of its own, writing its output to stdout and stderr.
// A timeout kills the group and is reported in the result; so is the end of bash, so
// background children do not outlive the check. The error is for a run that could not
// start, or for ctx ending (the goal was aborted).
func runBash(ctx context.Context, ev Evidence, command string, timeout time.Duration, stdout, stderr io.Writer) (bashResult, error) {
	dir := ev.WorkDir
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return bashResult{}, fmt.Errorf("the check's working dir %q is not a directory: %v", dir, err)
	}
	argv, env := []string{"bash", "-c", command}, []string(nil)
	if ev.Confine != nil {
		var err error
		if argv, env, err = ev.Confine(argv); err != nil {
			return bashResult{}, fmt.Errorf("the check cannot be confined to the goal's sandbox, so it was not run: %w", err)
		}
	}
	if len(ev.Env) > 0 {
		if env == nil {
			env = os.Environ()
		}
		env = append(env, ev.Env...)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return bashResult{}, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return bashResult{}, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, env
	// Our own pipes (not exec's copying goroutines) so Wait returns when bash exits, even if
	// a background child still holds the output open; that child is killed just after.
	cmd.Stdout, cmd.Stderr = outW, errW
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	procfd.SealInherited() // a check may leave a child behind: none may hold the window's pipes open
	startErr := cmd.Start()
	outW.Close() // Best effort: the child holds its own copies.
	errW.Close()
	if startErr != nil {
		outR.Close()
		errR.Close()
		return bashResult{}, fmt.Errorf("cannot run bash for the check: %w", startErr)
	}

	var drained sync.WaitGroup
	for _, p := range []struct {
		r *os.File
		w io.Writer
	}{{outR, stdout}, {errR, stderr}} {
		drained.Go(func() {
			io.Copy(p.w, p.r) // Best effort: a read error just ends the output early.
		})
	}

	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	killGroup := func() {
		// Best effort: the group may already be empty.
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()

	var res bashResult
	var ctxErr error
	select {
	case <-waited:
	case <-timer.C:
		res.timedOut = true
		killGroup()
		<-waited
	case <-ctx.Done():
		ctxErr = ctx.Err()
		killGroup()
		<-waited
	}
	killGroup()

	done := make(chan struct{})
	go func() { drained.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(drainGrace):
		outR.Close() // unblocks the copies; a process outside the group still has the pipe
		errR.Close()
		<-done
	}
	outR.Close()
	errR.Close()

	if ctxErr != nil {
		return res, fmt.Errorf("the check was stopped: %w", ctxErr)
	}
	res.exitCode = exitCode(cmd.ProcessState)
	return res, nil
}

func exitCode(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()) // as a shell reports it
	}
	return ps.ExitCode()
}

// tail is an io.Writer that keeps only the last n bytes written.
type tail struct {
	mu  sync.Mutex
	n   int
	buf []byte
}

func newTail(n int) *tail { return &tail{n: n} }

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	written := len(p)
	if len(p) >= t.n {
		t.buf = append(t.buf[:0], p[len(p)-t.n:]...)
		return written, nil
	}
	t.buf = append(t.buf, p...)
	// Trim in batches (at 2n) so a stream of small writes does not copy n bytes each time.
	if len(t.buf) > 2*t.n {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.n:]...)
	}
	return written, nil
}

// Bytes returns the last n bytes written.
func (t *tail) Bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.buf) > t.n {
		return append([]byte(nil), t.buf[len(t.buf)-t.n:]...)
	}
	return append([]byte(nil), t.buf...)
}

// head is an io.Writer that keeps the first n bytes written and notes whether more came.
type head struct {
	mu       sync.Mutex
	n        int
	buf      []byte
	overflow bool
}

func (h *head) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	room := h.n - len(h.buf)
	if len(p) > room {
		h.overflow = true
		h.buf = append(h.buf, p[:max(room, 0)]...)
	} else {
		h.buf = append(h.buf, p...)
	}
	return len(p), nil
}

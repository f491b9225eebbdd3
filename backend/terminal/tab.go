package terminal

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime/debug"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/creack/pty"

	"github.com/clusterspace/clusterspace/backend/procfd"
)

// readBufferSize is the most one PTY read takes; the kernel hands out at most a few KiB of
// terminal output per read, so larger buffers would only cost memory.
const readBufferSize = 32 << 10

// inputQueue is how many writes may wait for a program that is not reading its input
// before Write reports ErrInputFull instead of piling up memory.
const inputQueue = 256

// killGrace is how long a process gets to exit after SIGHUP before SIGKILL.
const killGrace = time.Second

// sessionPoll is how often kill looks for processes of the session still running.
const sessionPoll = 20 * time.Millisecond

// drainTimeout is how long the waiter lets the reader finish the output after the process
// exits; longer only when a background job keeps the terminal open, which we then close.
const drainTimeout = 250 * time.Millisecond

// sshFailed is the exit status ssh gives for its own errors (no connection, login refused,
// connection lost), as opposed to the status of the remote command.
const sshFailed = 255

// passwordWindow is how long after an SSH tab starts its stored password may be typed: past
// the login, a "password:" prompt belongs to something else and must not get it.
const passwordWindow = 60 * time.Second

// passwordEchoWait is how long the writer waits for a password prompt to turn echo off.
const passwordEchoWait = 2 * time.Second

// passwordPrompt matches the line ssh leaves the cursor on when it asks for the password.
var passwordPrompt = regexp.MustCompile(`(?i)password:\s*$`)

// tab is one terminal: its scrollback, its viewers and its current process.
type tab struct {
	m       *Manager
	paneID  string
	id      string
	spec    Spec
	argv    []string
	lifecyc sync.Mutex // serialises start, restart and close

	mu         sync.Mutex
	sb         scrollback
	viewers    map[*viewer]struct{}
	lastOutput time.Time
	inputMark  int64         // output offset when input was last written
	lastInput  string        // what was written then (keptInput), to recognise its echo
	changed    chan struct{} // closed at the next output or exit; nil while nobody waits
	title      string
	cols, rows int
	proc       *process
	exitCode   *int
	closed     bool
	password   string // typed once at the SSH password prompt, then forgotten
	pwDeadline time.Time
	// scr is what the terminal shows, brought up to date from sb when read.
	scr *screen
	// inputLines are the screen's text lines when input was last written: what wait_for_output
	// matches a pattern against is the lines that differ from these.
	inputLines map[string]bool
	// admitted is the sandbox dir of a goal whose boundary the person put this unconfined
	// tab in (an SSH task's remote shell; see AdmitTab).
	admitted string
}

// process is one run of the tab's command in a PTY.
type process struct {
	cmd        *exec.Cmd
	ptmx       *os.File
	pid        int
	input      chan []byte
	password   chan string   // the stored SSH password, for the writer to type
	exited     chan struct{} // closed when the process has been reaped
	readerDone chan struct{} // closed when the reader has stopped
	done       chan struct{} // closed when the process, its output and its goroutines are finished
	titles     titleScanner  // owned by the reader
}

func newTab(m *Manager, spec Spec, argv []string, id string) *tab {
	t := &tab{m: m, paneID: spec.PaneID, id: id, spec: spec, argv: argv,
		sb: newScrollback(m.opts.ScrollbackLines, m.opts.ScrollbackBytes), viewers: map[*viewer]struct{}{},
		title: defaultTitle(spec), cols: spec.Cols, rows: spec.Rows, scr: newScreen(spec.Cols, spec.Rows)}
	t.scr.patient = recogniserFor(spec) != nil
	return t
}

func (t *tab) info() TabInfo {
	t.m.mu.Lock() // never held together with t.mu
	p := t.m.panes[t.paneID]
	active := p != nil && p.Active() == t
	t.m.mu.Unlock()
	t.mu.Lock()
	defer t.mu.Unlock()
	info := TabInfo{PaneID: t.paneID, TabID: t.id, Title: t.title, Cols: t.cols, Rows: t.rows,
		Confined: t.spec.Sandbox != nil, ExitCode: t.exitCode, Active: active}
	if t.proc != nil && t.exitCode == nil {
		info.Running, info.PID = true, t.proc.pid
	}
	if t.spec.SSH != nil {
		info.Remote = t.spec.SSH.String()
	}
	return info
}

// environ is the environment of the tab's command.
func (t *tab) environ() []string {
	env := append(t.m.inheritedEnv(), "TERM=xterm-256color", "COLORTERM=truecolor", "TERM_PROGRAM=ClusterSpace",
		"CLUSTERSPACE_PANE_ID="+t.paneID, "CLUSTERSPACE_TAB_ID="+t.id)
	if t.spec.Sandbox != nil {
		env = append(env, t.m.opts.SandboxHelperEnv...)
	}
	return append(env, t.spec.Env...)
}

// start runs the tab's command in a new PTY with its reader, writer and waiter goroutines.
// The caller holds a Manager operation (enter), so the goroutines are counted before
// Shutdown can wait.
func (t *tab) start() error {
	t.lifecyc.Lock()
	defer t.lifecyc.Unlock()
	return t.startLocked()
}

func (t *tab) startLocked() error {
	cmd := exec.Command(t.argv[0], t.argv[1:]...)
	cmd.Dir = t.spec.Dir
	cmd.Env = t.environ()
	t.mu.Lock()
	ws := &pty.Winsize{Cols: uint16(t.cols), Rows: uint16(t.rows)}
	t.mu.Unlock()
	procfd.SealInherited() // a shell lives long: it must not hold the window's pipes open
	f, err := pty.StartWithSize(cmd, ws)
	if err != nil {
		return fmt.Errorf("start %s: %w", t.argv[0], err)
	}
	ptmx, err := pollable(f)
	if err != nil {
		_ = cmd.Process.Kill() // Best effort: we cannot serve this terminal.
		_ = cmd.Wait()
		return err
	}
	p := &process{cmd: cmd, ptmx: ptmx, pid: cmd.Process.Pid, input: make(chan []byte, inputQueue),
		password: make(chan string, 1),
		exited:   make(chan struct{}), readerDone: make(chan struct{}), done: make(chan struct{})}
	t.mu.Lock()
	t.proc, t.exitCode = p, nil
	if t.spec.SSH != nil && t.spec.SSH.Password != "" {
		t.password, t.pwDeadline = t.spec.SSH.Password, time.Now().Add(passwordWindow)
	}
	t.mu.Unlock()
	t.m.ops.Add(3)
	go t.readLoop(p)
	go t.writeLoop(p)
	go t.waitLoop(p)
	return nil
}

// pollable returns the PTY master in non-blocking mode on Go's poller. pty.Start leaves it
// blocking (it calls Fd), and a blocking read cannot be interrupted by Close, so a background
// job holding the terminal open would pin the reader forever.
func pollable(f *os.File) (*os.File, error) {
	defer f.Close()
	sc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	var fd int
	var dupErr error
	if err := sc.Control(func(raw uintptr) { fd, dupErr = syscall.Dup(int(raw)) }); err != nil {
		return nil, err
	}
	if dupErr != nil {
		return nil, fmt.Errorf("dup pty: %w", dupErr)
	}
	syscall.CloseOnExec(fd)
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return nil, fmt.Errorf("pty non-blocking: %w", err)
	}
	return os.NewFile(uintptr(fd), f.Name()), nil
}

// setSize applies a window size without f.Fd(), which would switch the file back to blocking.
func setSize(f *os.File, cols, rows int) error {
	sc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	ws := pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)}
	var errno syscall.Errno
	if err := sc.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCSWINSZ, uintptr(unsafe.Pointer(&ws)))
	}); err != nil {
		return err
	}
	if errno != 0 {
		return errno
	}
	return nil
}

// foreground is the process group in the foreground of the PTY (the shell's own when idle).
func foreground(f *os.File) int {
	sc, err := f.SyscallConn()
	if err != nil {
		return 0
	}
	var pgrp int32
	var errno syscall.Errno
	if sc.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCGPGRP, uintptr(unsafe.Pointer(&pgrp)))
	}) != nil || errno != 0 {
		return 0
	}
	return int(pgrp)
}

// recoverGoroutine logs a panic in one of the tab's goroutines and ends its process, so the
// tab shows as exited (and can be restarted) instead of hanging silently.
func (t *tab) recoverGoroutine(name string, p *process) {
	if r := recover(); r != nil {
		t.m.log.Error("terminal goroutine panicked", "goroutine", name, "pane", t.paneID, "tab", t.id,
			"panic", r, "stack", string(debug.Stack()))
		_ = syscall.Kill(-p.pid, syscall.SIGKILL) // Best effort: the process may be gone already.
	}
}

func (t *tab) readLoop(p *process) {
	defer t.m.ops.Done()
	defer close(p.readerDone)
	defer t.recoverGoroutine("reader", p)
	buf := make([]byte, readBufferSize)
	for {
		n, err := p.ptmx.Read(buf)
		if n > 0 {
			t.output(p, buf[:n])
		}
		if err != nil {
			return // EIO once every copy of the terminal's other side is closed
		}
	}
}

// output records a piece of the PTY's output: scrollback, viewers, waiters, title, password.
func (t *tab) output(p *process, data []byte) {
	title, hasTitle := p.titles.feed(data)
	now := time.Now()
	var pwTail []byte
	t.mu.Lock()
	t.sb.write(data)
	t.lastOutput = now
	for v := range t.viewers {
		v.push(data, now)
	}
	changed := t.changed
	t.changed = nil
	if hasTitle && title != t.title {
		t.title = title
	} else {
		hasTitle = false
	}
	if t.password != "" {
		if now.After(t.pwDeadline) {
			t.password = ""
		} else if bytes.IndexByte(data, ':') >= 0 { // cheap filter: every password prompt has one
			pwTail = t.sb.read(max(t.sb.tailStart(1), t.sb.end-512), t.sb.end)
		}
	}
	t.mu.Unlock()
	if changed != nil {
		close(changed)
	}
	if pwTail != nil && passwordPrompt.MatchString(Strip(pwTail)) {
		t.mu.Lock()
		pw := t.password
		t.password = ""
		t.mu.Unlock()
		if pw != "" {
			select {
			case p.password <- pw:
			default: // already on its way
			}
		}
	}
	if hasTitle {
		t.m.publish(EventTitle, t)
	}
}

func (t *tab) writeLoop(p *process) {
	defer t.m.ops.Done()
	defer t.recoverGoroutine("writer", p)
	for {
		select {
		case data := <-p.input:
			if _, err := p.ptmx.Write(data); err != nil {
				return // the terminal is closed; the waiter reports the exit
			}
		case pw := <-p.password:
			if !t.typePassword(p, pw) {
				return
			}
		case <-p.exited:
			return
		}
	}
}

// typePassword types the stored password once the terminal stops echoing, as ssh makes it
// do before it reads one: a password typed into an echoing terminal would show on screen and
// in the scrollback. It returns false when the terminal is gone.
func (t *tab) typePassword(p *process, pw string) bool {
	deadline := time.Now().Add(passwordEchoWait)
	for echoing(p.ptmx) {
		if time.Now().After(deadline) {
			t.m.log.Warn("not typing the stored ssh password: the terminal kept echoing", "pane", t.paneID, "tab", t.id)
			return true
		}
		select {
		case <-p.exited:
			return false
		case <-time.After(10 * time.Millisecond):
		}
	}
	_, err := p.ptmx.Write([]byte(pw + "\r"))
	return err == nil
}

// echoing reports whether the terminal echoes input (ECHO in its local modes).
func echoing(f *os.File) bool {
	sc, err := f.SyscallConn()
	if err != nil {
		return true
	}
	var tio syscall.Termios
	var errno syscall.Errno
	if sc.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TCGETS, uintptr(unsafe.Pointer(&tio)))
	}) != nil || errno != 0 {
		return true
	}
	return tio.Lflag&syscall.ECHO != 0
}

func (t *tab) waitLoop(p *process) {
	defer t.m.ops.Done()
	defer t.recoverGoroutine("waiter", p)
	err := p.cmd.Wait()
	code := exitCode(p.cmd, err)
	close(p.exited)
	select {
	case <-p.readerDone:
	case <-time.After(drainTimeout):
	}
	_ = p.ptmx.Close() // Best effort: ends the reader if a background job still holds the terminal.
	<-p.readerDone
	msg := fmt.Appendf(nil, "\r\n\x1b[0m[process exited with code %d]\r\n", code)
	if t.spec.SSH != nil && code == sshFailed {
		msg = fmt.Appendf(msg, "[ssh %s: could not connect or log in, or the connection dropped (see ssh's message above). "+
			"Restart the tab to reconnect; if the login fails, check the host, port, key path and password of the saved server.]\r\n", t.spec.SSH)
	}
	t.mu.Lock()
	t.exitCode = &code
	t.password = ""
	t.sb.write(msg)
	for v := range t.viewers {
		v.push(msg, time.Now())
	}
	changed := t.changed
	t.changed = nil
	closed := t.closed
	t.mu.Unlock()
	if changed != nil {
		close(changed)
	}
	close(p.done)
	if !closed {
		t.m.publish(EventExited, t)
	}
}

// exitCode is the shell convention: the status, or 128+signal for a killed process.
func exitCode(cmd *exec.Cmd, err error) int {
	if cmd.ProcessState == nil {
		return -1
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return -1
	}
	return cmd.ProcessState.ExitCode()
}

// kill ends the process and everything it started in its terminal: SIGHUP to its process
// group and to every other process of its session (background jobs have groups of their
// own; what closing a terminal window does), then SIGKILL to whatever is left after
// killGrace. It returns once the process and its goroutines are done. A process that left
// the session on purpose (setsid, a daemon) is not ours to end.
func (p *process) kill() {
	select {
	case <-p.done:
		if len(sessionMembers(p.pid)) == 0 {
			return
		}
	default:
	}
	_ = syscall.Kill(-p.pid, syscall.SIGHUP) // Best effort: it may have exited already.
	_ = syscall.Kill(p.pid, syscall.SIGHUP)  // the session leader, should it have left its group
	signalSession(p.pid, syscall.SIGHUP)
	grace := time.NewTimer(killGrace)
	defer grace.Stop()
	poll := time.NewTicker(sessionPoll)
	defer poll.Stop()
	done := p.done
wait:
	for {
		select {
		case <-done:
			done = nil // a nil channel blocks: from now on only the rest of the session is awaited
		case <-poll.C:
		case <-grace.C:
			break wait
		}
		if done == nil && len(sessionMembers(p.pid)) == 0 {
			return
		}
	}
	_ = syscall.Kill(-p.pid, syscall.SIGKILL) // Best effort, as above.
	_ = syscall.Kill(p.pid, syscall.SIGKILL)
	signalSession(p.pid, syscall.SIGKILL)
	<-p.done
}

func (t *tab) current() *process {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.proc
}

func (t *tab) restart() error {
	t.lifecyc.Lock()
	defer t.lifecyc.Unlock()
	t.mu.Lock()
	closed := t.closed
	t.mu.Unlock()
	if closed {
		return fmt.Errorf("pane %q, tab %q: %w", t.paneID, t.id, ErrNoTab)
	}
	if p := t.current(); p != nil {
		p.kill()
	}
	t.record([]byte("\r\n\x1b[0m[restarted]\r\n"))
	return t.startLocked()
}

// record appends output that the tab itself writes (markers), as if the PTY had.
func (t *tab) record(msg []byte) {
	now := time.Now()
	t.mu.Lock()
	t.sb.write(msg)
	for v := range t.viewers {
		v.push(msg, now)
	}
	t.mu.Unlock()
}

// close kills the process and releases the tab's viewers. Safe to call more than once.
func (t *tab) close() {
	t.lifecyc.Lock()
	defer t.lifecyc.Unlock()
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return
	}
	t.closed = true
	for v := range t.viewers {
		v.stop() // its batcher ends and leaves; stopping does not block
	}
	p := t.proc
	t.mu.Unlock()
	if p != nil {
		p.kill()
	}
	t.scr.close()
}

// ID is the tab's id, by which its pane finds it.
func (t *tab) ID() string { return t.id }

func (t *tab) write(data []byte) error {
	lines := t.screenLines()
	t.mu.Lock()
	t.inputLines = lines
	p, exit := t.proc, t.exitCode
	t.inputMark, t.lastInput = t.sb.end, keptInput(data)
	for v := range t.viewers {
		v.typed = true
	}
	t.mu.Unlock()
	if p == nil || exit != nil {
		return t.exitedError(exit)
	}
	select {
	case p.input <- bytes.Clone(data):
		return nil
	case <-p.exited:
		return t.exitedError(t.info().ExitCode)
	default:
		return ErrInputFull
	}
}

func (t *tab) exitedError(code *int) error {
	if code == nil {
		return fmt.Errorf("pane %q, tab %q: %w", t.paneID, t.id, ErrExited)
	}
	return fmt.Errorf("pane %q, tab %q: %w with code %d", t.paneID, t.id, ErrExited, *code)
}

func (t *tab) resize(cols, rows int) error {
	t.mu.Lock()
	t.cols, t.rows = cols, rows
	p, exit := t.proc, t.exitCode
	t.mu.Unlock()
	t.scr.resize(t, cols, rows)
	if p == nil || exit != nil {
		return nil // applied when the tab restarts
	}
	if err := setSize(p.ptmx, cols, rows); err != nil && !errors.Is(err, os.ErrClosed) {
		return fmt.Errorf("resize pane %q, tab %q: %w", t.paneID, t.id, err)
	}
	return nil
}

package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// stderrKept is how much of a stdio server's error output is kept, for the message that
// says why it failed.
const stderrKept = 2048

// lastLineKept bounds the line of a stdio server's error output that says why it exited: it
// goes into the answer to every call of its tools while it is down, so it must stay short.
const lastLineKept = 300

// maxLine bounds one line of a stdio server's stdout, as the SDK bounds one message: a line
// is held whole to tell a message from a stray print, so a server cannot make it unbounded.
const maxLine = sdk.DefaultMaxLineLength

// stdioTransport starts a server's command and speaks JSON-RPC over its stdin and stdout, as
// the SDK's CommandTransport does, with two differences. Only the lines of its stdout that are
// JSON-RPC messages reach the SDK: the SDK's decoder ends the session at the first thing that
// is not JSON, so a banner or a log line a library prints there would kill a working server,
// where other MCP clients skip such lines. And the process is reaped as soon as it exits, so
// the session's end carries its exit status and its children are ended at once.
type stdioTransport struct {
	cmd *exec.Cmd
	// skipped is told each non-empty line of stdout that was not passed on.
	skipped func(line []byte)
	// proc is the started process, set by Connect.
	proc *process
}

func (t *stdioTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	stdin, err := t.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, w, err := os.Pipe()
	if err != nil {
		stdin.Close() // Best effort: nothing was started.
		return nil, err
	}
	// Its stdout is a pipe of ours rather than exec's (StdoutPipe), because exec's is closed
	// by Wait, which the reaper calls while the session may still read what it wrote last.
	t.cmd.Stdout = w
	err = t.cmd.Start()
	w.Close() // the server holds its own copy: stdout ends (EOF) when it and its children are gone
	if err != nil {
		out.Close()
		return nil, err
	}
	p := &process{cmd: t.cmd, stdin: stdin, out: out, exited: make(chan struct{})}
	t.proc = p
	go p.reap()
	lines := &jsonLines{r: bufio.NewReader(out), skipped: t.skipped}
	return (&sdk.IOTransport{Reader: lines, Writer: p}).Connect(ctx)
}

// process is a started stdio server. It is the session's writer: closing it ends the server.
type process struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    *os.File
	exited chan struct{} // closed once the process is reaped; err is set then
	err    error
}

// reap waits for the process, then ends its process group: what it spawned would otherwise
// live on holding its stdout, and the session would never see it end.
func (p *process) reap() {
	err := p.cmd.Wait()
	p.err = err
	close(p.exited)
	killGroup(p.cmd) // Best effort: the group may be empty.
}

func (p *process) Write(b []byte) (int, error) { return p.stdin.Write(b) }

// Close ends the server as the MCP spec asks (stdin closed, then SIGTERM, then SIGKILL, each
// after stopGrace) and returns how the process ended: the session reports it as its end.
func (p *process) Close() error {
	p.stdin.Close() // Best effort: Wait closes it when the process has exited.
	// Closed last: the SDK's reader may be blocked on it, and a child may still hold stdout.
	defer p.out.Close()
	if p.waitExit(stopGrace) {
		return p.err
	}
	p.cmd.Process.Signal(syscall.SIGTERM) // Best effort: it may have exited just now.
	if p.waitExit(stopGrace) {
		return p.err
	}
	killGroup(p.cmd)
	if p.waitExit(stopGrace) {
		return p.err
	}
	return fmt.Errorf("it did not exit even after SIGKILL")
}

func (p *process) waitExit(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
		return false
	}
}

// jsonLines passes on the lines of a server's stdout that are JSON-RPC messages and tells
// skipped about the others.
type jsonLines struct {
	r       *bufio.Reader
	skipped func(line []byte)
	pending []byte
	err     error
}

// Close does nothing: the session closes stdout through process.Close, after the server had
// its chance to exit (closing it first would kill a server writing its last words).
func (l *jsonLines) Close() error { return nil }

func (l *jsonLines) Read(p []byte) (int, error) {
	for len(l.pending) == 0 {
		if l.err != nil {
			return 0, l.err
		}
		line, err := l.line()
		l.err = err
		switch {
		case isMessage(line):
			l.pending = line
		case len(bytes.TrimSpace(line)) > 0 && l.skipped != nil:
			l.skipped(line)
		}
	}
	n := copy(p, l.pending)
	l.pending = l.pending[n:]
	return n, nil
}

// line reads up to and including the next newline, at most maxLine bytes.
func (l *jsonLines) line() ([]byte, error) {
	var line []byte
	for {
		chunk, err := l.r.ReadSlice('\n')
		if len(line)+len(chunk) > maxLine {
			return nil, fmt.Errorf("it wrote a line of more than %d bytes on its stdout", maxLine)
		}
		line = append(line, chunk...)
		if err != bufio.ErrBufferFull {
			return line, err
		}
	}
}

// rpcProbe is the one member every JSON-RPC message has.
type rpcProbe struct {
	JSONRPC *string `json:"jsonrpc"`
}

// isMessage reports whether a line is a JSON-RPC message, or a batch of them: a JSON object
// with a "jsonrpc" member. Anything else a server prints (a banner, a log line, even one in
// JSON) is not. MCP's stdio transport puts one message on a line, without inner newlines.
func isMessage(line []byte) bool {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return false
	}
	switch line[0] {
	case '{':
		var m rpcProbe
		return json.Unmarshal(line, &m) == nil && m.JSONRPC != nil
	case '[':
		var batch []rpcProbe
		if json.Unmarshal(line, &batch) != nil || len(batch) == 0 {
			return false
		}
		for _, m := range batch {
			if m.JSONRPC == nil {
				return false
			}
		}
		return true
	}
	return false
}

// tail keeps the last stderrKept bytes written to it.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > stderrKept {
		t.buf = t.buf[len(t.buf)-stderrKept:]
	}
	return len(p), nil
}

var spaces = regexp.MustCompile(`\s+`)

// LastLine is the last non-empty line written, at most lastLineKept bytes: for an exit, the
// line that usually says why (a traceback's error, a fatal log line).
func (t *tail) LastLine() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := strings.Split(strings.TrimSpace(string(t.buf)), "\n")
	return clip(strings.TrimSpace(lines[len(lines)-1]), lastLineKept)
}

// clip cuts text to at most n bytes, on a character boundary, marking the cut.
func clip(text string, n int) string {
	if len(text) <= n {
		return text
	}
	for n > 0 && !utf8.RuneStart(text[n]) {
		n--
	}
	return text[:n] + "…"
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(spaces.ReplaceAllString(string(t.buf), " "))
}

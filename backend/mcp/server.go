package mcp

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/clusterspace/clusterspace/backend/procfd"
	"github.com/clusterspace/clusterspace/backend/tools"
)

// States of a server.
const (
	stateNotStarted = "not_started"
	stateStarting   = "starting"
	stateRunning    = "running"
	stateFailed     = "failed"
	stateExited     = "exited"
	stateDisabled   = "disabled"
	stateStopped    = "stopped"
)

// server is one entry of mcp.json and, once started, its session.
type server struct {
	m    *Manager
	name string
	cfg  ServerConfig

	mu       sync.Mutex
	state    string
	err      string
	since    time.Time
	starting chan struct{}
	session  *sdk.ClientSession
	cmd      *exec.Cmd
	// ended is closed when the watcher has recorded the end of the current session.
	ended chan struct{}
	// tools are the tools last listed: offered while it runs, withheld while it is failed or
	// exited (a call gets a standIn), forgotten once it is stopped.
	tools    []*tool
	toolErrs []string
	stale    bool
	stderr   *tail
	// skippedLines counts the lines of its stdout that were not JSON-RPC messages; the first
	// one is kept for the message of a start that failed.
	skippedLines atomic.Int64
	firstSkipped atomic.Pointer[string]
}

func newServer(m *Manager, name string, cfg ServerConfig) *server {
	s := &server{m: m, name: name, cfg: cfg, state: stateNotStarted}
	if cfg.Disabled {
		s.state = stateDisabled
	}
	return s
}

// ensure starts the server if it is not running (a failed one only after retryAfter, unless
// forced), or re-lists its tools if it said they changed. It returns once that is done.
func (s *server) ensure(force bool) {
	s.mu.Lock()
	switch s.state {
	case stateRunning:
		stale, sess := s.stale, s.session
		s.stale = false
		s.mu.Unlock()
		if stale {
			s.list(sess)
		}
		return
	case stateStarting:
		ch := s.starting
		s.mu.Unlock()
		<-ch
		return
	case stateFailed, stateExited:
		if !force && time.Since(s.since) < retryAfter {
			s.mu.Unlock()
			return
		}
	case stateNotStarted:
	default: // disabled, stopped
		s.mu.Unlock()
		return
	}
	s.state, s.err, s.starting = stateStarting, "", make(chan struct{})
	ch := s.starting
	s.mu.Unlock()

	sess, cmd, err := s.start()

	s.mu.Lock()
	defer close(ch)
	if s.state == stateStopped || s.m.isClosed() {
		s.mu.Unlock()
		if sess != nil {
			s.closeSession(sess, cmd) // stopped while it started: end what started
		}
		s.mu.Lock()
		s.state = stateStopped
		s.mu.Unlock()
		return
	}
	s.since = time.Now()
	if err != nil {
		s.state, s.err = stateFailed, s.redact(err.Error())
		s.mu.Unlock()
		s.m.opts.Logger.Warn("mcp: server did not start", "server", s.name, "err", s.err)
		return
	}
	s.state, s.session, s.cmd, s.tools, s.toolErrs = stateRunning, sess, cmd, nil, nil
	ended := make(chan struct{})
	s.ended = ended
	// Added under s.mu, so a Close that stops the server after this waits for the watcher.
	s.m.watchers.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.m.watchers.Done()
		defer close(ended)
		s.watch(sess)
	}()
	s.list(sess)
}

// start connects to the server and initializes the session, within StartTimeout.
func (s *server) start() (*sdk.ClientSession, *exec.Cmd, error) {
	ctx, cancel := context.WithTimeout(context.Background(), s.m.opts.StartTimeout)
	defer cancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "clusterspace", Version: "1"}, &sdk.ClientOptions{
		Capabilities: &sdk.ClientCapabilities{},
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			s.mu.Lock()
			s.stale = true
			s.mu.Unlock()
		},
	})
	var transport sdk.Transport
	var cmd *exec.Cmd
	var stdio *stdioTransport
	if s.cfg.URL != "" {
		transport = &sdk.StreamableClientTransport{Endpoint: s.cfg.URL, MaxRetries: -1, DisableStandaloneSSE: true,
			HTTPClient: &http.Client{Transport: headerTransport{s.cfg.Headers, http.DefaultTransport}}}
	} else {
		path, err := exec.LookPath(s.cfg.Command)
		if err != nil {
			return nil, nil, fmt.Errorf("command %q not found: install it or give its full path in %s", s.cfg.Command, s.m.path)
		}
		cmd = exec.Command(path, s.cfg.Args...)
		cmd.Dir = s.cfg.Dir
		cmd.Env = os.Environ()
		for k, v := range s.cfg.Env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		// Its own process group, so what it spawns ends with it; and killed with the app
		// should the app die without closing it.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		s.stderr = &tail{}
		cmd.Stderr = s.stderr
		// A child it leaves behind may hold its stderr open: its exit must not wait for that.
		cmd.WaitDelay = stopGrace
		stdio = &stdioTransport{cmd: cmd, skipped: s.skipLine}
		transport = stdio
	}
	procfd.SealInherited() // the server lives with the app: it must not hold the window's pipes open
	sess, err := client.Connect(ctx, transport, nil)
	if err != nil {
		if stdio != nil && stdio.proc != nil {
			killGroup(cmd)
			<-stdio.proc.exited // reaped, so it is no zombie; its status says nothing more
		}
		return nil, nil, s.startError(ctx, err)
	}
	return sess, cmd, nil
}

func (s *server) startError(ctx context.Context, err error) error {
	msg := err.Error()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		msg = fmt.Sprintf("it did not answer within %s", s.m.opts.StartTimeout)
	}
	if s.stderr != nil {
		if t := s.stderr.String(); t != "" {
			msg += "; its error output: " + t
		}
	}
	if first := s.firstSkipped.Load(); first != nil {
		msg += fmt.Sprintf("; it printed lines on its stdout that are not JSON-RPC messages, the first: %q", *first)
	}
	return fmt.Errorf("%s", msg)
}

// skipLine notes a line of a stdio server's stdout that is not a JSON-RPC message (a banner,
// a library's log line): skipped, as other MCP clients skip it, and logged, the first one
// loudly and the rest quietly, since a chatty server prints many.
func (s *server) skipLine(line []byte) {
	text := s.redact(clip(strings.TrimSpace(string(line)), lastLineKept))
	if s.skippedLines.Add(1) == 1 {
		s.firstSkipped.Store(&text)
		s.m.opts.Logger.Warn("mcp: skipped a line of the server's stdout that is not a JSON-RPC message (logged at debug level from now on)",
			"server", s.name, "line", text)
		return
	}
	s.m.opts.Logger.Debug("mcp: skipped a line of the server's stdout that is not a JSON-RPC message", "server", s.name, "line", text)
}

// list reads the server's tools and makes them offerable.
func (s *server) list(sess *sdk.ClientSession) {
	ctx, cancel := context.WithTimeout(context.Background(), s.m.opts.StartTimeout)
	defer cancel()
	var ts []*tool
	var errs []string
	seen := map[string]string{}
	for t, err := range sess.Tools(ctx, nil) {
		if err != nil {
			errs = append(errs, s.redact(fmt.Sprintf("listing its tools failed: %v", err)))
			break
		}
		tl, err := s.newTool(t)
		if err != nil {
			errs = append(errs, s.redact(fmt.Sprintf("tool %q is not offered: %v", t.Name, err)))
			continue
		}
		if other, dup := seen[tl.name]; dup {
			errs = append(errs, fmt.Sprintf("tool %q is not offered: its name %s is taken by %q", t.Name, tl.name, other))
			continue
		}
		seen[tl.name] = t.Name
		ts = append(ts, tl)
	}
	s.mu.Lock()
	if s.session == sess && s.state == stateRunning {
		s.tools, s.toolErrs = ts, errs
	}
	s.mu.Unlock()
}

// watch waits for the session to end; an end nobody asked for is reported: a stdio server
// exited (with its exit status and the last line of its error output), an HTTP server's
// connection failed. Its tools are withheld: not offered, but a call of one is told why.
func (s *server) watch(sess *sdk.ClientSession) {
	err := sess.Wait()
	s.mu.Lock()
	if s.session != sess || s.state != stateRunning {
		s.mu.Unlock()
		return
	}
	state, msg := stateExited, "it exited"
	var exit *exec.ExitError
	switch {
	case s.cfg.URL != "":
		state, msg = stateFailed, "the connection to it ended"
		if err != nil {
			msg += ": " + err.Error()
		}
	case err == nil:
	case errors.As(err, &exit):
		msg += ": " + err.Error() // "exit status 3", "signal: killed"
	default:
		msg = "its session ended: " + err.Error()
	}
	cmd := s.cmd
	if s.stderr != nil {
		if line := s.stderr.LastLine(); line != "" {
			msg += "; the last line of its error output: " + line
		}
	}
	s.state, s.err, s.since, s.session, s.cmd = state, s.redact(msg), time.Now(), nil, nil
	s.mu.Unlock()
	s.m.opts.Logger.Warn("mcp: server stopped", "server", s.name, "err", s.err)
	if cmd != nil {
		killGroup(cmd) // Best effort: what it spawned goes with it.
	}
}

// stop ends the server for good (the engine closes, or its entry changed).
func (s *server) stop() {
	s.mu.Lock()
	starting := s.starting
	wasStarting := s.state == stateStarting
	sess, cmd := s.session, s.cmd
	s.state, s.session, s.cmd, s.tools, s.toolErrs = stateStopped, nil, nil, nil, nil
	s.mu.Unlock()
	if sess != nil {
		s.closeSession(sess, cmd)
	}
	if wasStarting {
		<-starting // the start ends what it started when it sees the stop
	}
}

// closeSession closes the session (stdin closed, then SIGTERM, then SIGKILL) and ends the
// server's process group.
func (s *server) closeSession(sess *sdk.ClientSession, cmd *exec.Cmd) {
	sess.Close() // Best effort: the server may already be gone.
	if cmd != nil {
		killGroup(cmd)
	}
}

// killGroup ends the process group a stdio server leads (what it spawned too).
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil && cmd.Process.Pid > 0 {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // Best effort: it may be gone already.
	}
}

// offered is what the server offers now: its tools while it runs.
func (s *server) offered() []tools.Tool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != stateRunning {
		return nil
	}
	out := make([]tools.Tool, len(s.tools))
	for i, t := range s.tools {
		out[i] = t
	}
	return out
}

// current is the live session and the channel closed when its end is recorded, or nil.
func (s *server) current() (*sdk.ClientSession, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.session, s.ended
}

func (s *server) problem() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch s.state {
	case stateFailed:
		if len(s.tools) > 0 { // it ran once: it was lost, not refused
			return fmt.Sprintf("MCP server %s failed (%s); its tools are withheld until it is reached again: a call of one is told why", s.name, s.err)
		}
		return fmt.Sprintf("MCP server %s did not start (%s); its tools are not offered", s.name, s.err)
	case stateExited:
		return fmt.Sprintf("MCP server %s stopped (%s); its tools are withheld until it starts again: a call of one is told why", s.name, s.err)
	}
	if len(s.toolErrs) > 0 {
		return fmt.Sprintf("MCP server %s: %s", s.name, strings.Join(s.toolErrs, "; "))
	}
	return ""
}

func (s *server) status() ServerStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := ServerStatus{Name: s.name, Transport: s.cfg.transport(), Command: s.cfg.Command, Args: s.cfg.Args, URL: s.cfg.URL,
		Env: masked(s.cfg.Env), Headers: masked(s.cfg.Headers), Risk: s.cfg.riskOf(""), State: s.state, Error: s.err,
		Tools: []ToolInfo{}, ToolErrors: s.toolErrs}
	if st.State == stateStopped {
		st.State = stateNotStarted
	}
	if s.cmd != nil && s.cmd.Process != nil {
		st.PID = s.cmd.Process.Pid
	}
	if s.state == stateRunning { // else its tools are withheld: not what it offers
		for _, t := range s.tools {
			st.Tools = append(st.Tools, ToolInfo{Name: t.name, Tool: t.orig, Description: t.desc, Risk: t.risk})
		}
	}
	return st
}

// redact replaces the server's env and header values in a message: a server may echo
// its token in an error, and messages reach logs, events and Settings.
func (s *server) redact(msg string) string {
	// Longest first: a value that holds another (a header and its bare token) goes whole.
	values := slices.SortedFunc(maps.Keys(s.cfg.secrets(s.name)), func(a, b string) int { return len(b) - len(a) })
	for _, v := range values {
		msg = strings.ReplaceAll(msg, v, "••••••")
	}
	return msg
}

// headerTransport adds the configured headers to every request to an HTTP server.
type headerTransport struct {
	headers map[string]string
	next    http.RoundTripper
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 {
		r = r.Clone(r.Context())
		for k, v := range t.headers {
			r.Header.Set(k, v)
		}
	}
	return t.next.RoundTrip(r)
}

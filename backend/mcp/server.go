package mcp

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
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

// stderrKept is how much of a stdio server's error output is kept, for the message that
// says why it failed.
const stderrKept = 2048

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
	tools    []*tool
	toolErrs []string
	stale    bool
	stderr   *tail
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
	s.state, s.session, s.cmd = stateRunning, sess, cmd
	// Added under s.mu, so a Close that stops the server after this waits for the watcher.
	s.m.watchers.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.m.watchers.Done()
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
		transport = &sdk.CommandTransport{Command: cmd, TerminateDuration: stopGrace}
	}
	procfd.SealInherited() // the server lives with the app: it must not hold the window's pipes open
	sess, err := client.Connect(ctx, transport, nil)
	if err != nil {
		if cmd != nil && cmd.Process != nil {
			killGroup(cmd)
			cmd.Wait() // Best effort: reaped so it is no zombie; its status says nothing more.
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
	return fmt.Errorf("%s", msg)
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

// watch waits for the session to end; an end nobody asked for is a crash, reported.
func (s *server) watch(sess *sdk.ClientSession) {
	err := sess.Wait()
	s.mu.Lock()
	if s.session != sess || s.state != stateRunning {
		s.mu.Unlock()
		return
	}
	msg := "it exited"
	if err != nil {
		msg += ": " + err.Error()
	}
	cmd := s.cmd
	if s.stderr != nil {
		if t := s.stderr.String(); t != "" {
			msg += "; its error output: " + t
		}
	}
	s.state, s.err, s.since, s.session, s.cmd, s.tools = stateExited, s.redact(msg), time.Now(), nil, nil, nil
	s.mu.Unlock()
	s.m.opts.Logger.Warn("mcp: server exited", "server", s.name, "err", s.err)
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
	s.state, s.session, s.cmd, s.tools = stateStopped, nil, nil, nil
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

func (s *server) offered() []tools.Tool {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]tools.Tool, len(s.tools))
	for i, t := range s.tools {
		out[i] = t
	}
	return out
}

// current is the live session, or nil and why there is none.
func (s *server) current() (*sdk.ClientSession, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.session == nil {
		why := s.state
		if s.err != "" {
			why += ": " + s.err
		}
		return nil, why
	}
	return s.session, ""
}

func (s *server) problem() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch s.state {
	case stateFailed:
		return fmt.Sprintf("MCP server %s did not start (%s); its tools are not offered", s.name, s.err)
	case stateExited:
		return fmt.Sprintf("MCP server %s stopped (%s); its tools are not offered until it starts again", s.name, s.err)
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
	for _, t := range s.tools {
		st.Tools = append(st.Tools, ToolInfo{Name: t.name, Tool: t.orig, Description: t.desc, Risk: t.risk})
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

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(spaces.ReplaceAllString(string(t.buf), " "))
}

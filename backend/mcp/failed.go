package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/clusterspace/clusterspace/backend/tools"
)

// exitWait is how long a call whose stdio server vanished under it waits for the session's
// end to be recorded (the process reaped: exit status and error output), to answer with why.
const exitWait = 3 * time.Second

// withheld is the stand-in for the tool of that name while the server is failed or exited
// (or starting again): the tool is not offered, but a call of it is answered with why.
func (s *server) withheld(name string) (tools.Tool, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch s.state {
	case stateFailed, stateExited, stateStarting:
	default:
		return nil, false
	}
	for _, t := range s.tools {
		if t.name == name {
			return &standIn{t}, true
		}
	}
	return nil, false
}

// whyLocked says why the server is not running. s.mu held.
func (s *server) whyLocked() string {
	switch {
	case s.state == stateStarting:
		return "it is starting again"
	case s.err != "":
		return s.err
	}
	return strings.ReplaceAll(s.state, "_", " ")
}

// notRunning is the answer to a call of one of its tools while the server is not running:
// what happened, and what to do.
func (s *server) notRunning(tool string) tools.Result {
	s.mu.Lock()
	state, why := s.state, s.whyLocked()
	s.mu.Unlock()
	switch state {
	case stateRunning:
		return tools.Errorf("MCP server %s is running again: %s is offered again from your next turn; call it then.", s.name, tool)
	case stateStopped:
		return tools.Errorf("MCP server %s is not running (ClusterSpace stopped it: its entry in %s changed or went, or the app is closing): %s cannot be called; go on without it.", s.name, s.m.path, tool)
	case stateDisabled:
		return tools.Errorf("MCP server %s is disabled in %s: %s cannot be called; go on without it, or ask the person to enable it.", s.name, s.m.path, tool)
	}
	return tools.Errorf("MCP server %s is not running (%s): %s cannot be called now. Its tools are not offered until it runs again "+
		"(it is tried again at the first turn %s after it stopped); go on without them, and tell the person if the work needs this server: "+
		"Settings shows why it stopped and can start it again.", s.name, why, tool, retryAfter)
}

// lost answers a call that failed because the server is gone under it. A stdio server's
// session ends with its process, and its watcher records why: the call waits for that. An
// HTTP server's session does not end by itself (each request is a connection of its own),
// so the server is marked failed here and its session closed; it is tried again as a failed
// start is. reason is the call's error.
func (s *server) lost(sess *sdk.ClientSession, ended <-chan struct{}, reason error, tool string) tools.Result {
	if s.cfg.URL == "" {
		t := time.NewTimer(exitWait)
		select {
		case <-ended:
		case <-t.C:
		}
		t.Stop()
	}
	s.mu.Lock()
	if s.session == sess && s.state == stateRunning {
		msg := "the connection to it failed: " + reason.Error()
		var op *net.OpError
		if errors.As(reason, &op) {
			msg = "the connection to it failed: " + op.Error()
		} else if errors.Is(reason, sdk.ErrSessionMissing) {
			msg = "it no longer knows this client's session (it restarted?)"
		}
		cmd := s.cmd
		s.state, s.err, s.since, s.session, s.cmd = stateFailed, s.redact(msg), time.Now(), nil, nil
		// Added under s.mu, as the watcher is, so that Close waits for the session's end.
		s.m.watchers.Add(1)
		go func() {
			defer s.m.watchers.Done()
			s.closeSession(sess, cmd)
		}()
		s.m.opts.Logger.Warn("mcp: server lost", "server", s.name, "err", s.err)
	}
	s.mu.Unlock()
	return s.notRunning(tool)
}

// gone reports whether a call failed because the connection to the server is gone, rather
// than because the server answered with an error: the session closed, the server forgot it,
// or the network refused or broke the connection.
func gone(err error) bool {
	var op *net.OpError
	return errors.Is(err, sdk.ErrConnectionClosed) || errors.Is(err, sdk.ErrSessionMissing) ||
		errors.As(err, &op) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// standIn answers a call of a tool whose server is failed or exited. The tool is withheld
// (not offered: a tool that cannot run would only cost the model effort), but the model may
// still call it, planned from an earlier turn; the registry then finds the stand-in
// (tools.Withholder), which says why the server is not running and what to do, where the model
// would otherwise read "there is no tool named …". It runs nothing and never reaches the
// server, even one that is back, so it is read_only and runs nowhere outside: no approval is
// asked for a call that only returns a reason. The real tool, at its own risk, comes back with
// the next listing after the server starts again.
type standIn struct{ t *tool }

func (s *standIn) Name() string            { return s.t.name }
func (s *standIn) Schema() json.RawMessage { return s.t.Schema() }
func (s *standIn) Risk() tools.Risk        { return tools.ReadOnly }
func (s *standIn) Description() string {
	return fmt.Sprintf("Unavailable while the MCP server %s is not running: a call only returns why. %s", s.t.srv.name, s.t.desc)
}

func (s *standIn) Run(context.Context, tools.Call) (tools.Result, error) {
	return s.t.srv.notRunning(s.t.name), nil
}

package terminal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// SSHTarget is a saved SSH server.
type SSHTarget struct {
	Host    string
	Port    int // 0: ssh's default
	User    string
	KeyPath string
	// Password is typed once at the password prompt; it is never logged or shown.
	Password string
}

// String is user@host:port, without the password.
func (t SSHTarget) String() string {
	s := t.Host
	if t.User != "" {
		s = t.User + "@" + s
	}
	if t.Port != 0 {
		s += ":" + strconv.Itoa(t.Port)
	}
	return s
}

// GoString keeps the password out of %#v as String keeps it out of %v.
func (t SSHTarget) GoString() string { return "terminal.SSHTarget{" + t.String() + "}" }

// LogValue keeps the password out of structured logs.
func (t SSHTarget) LogValue() slog.Value { return slog.StringValue(t.String()) }

// remoteTimeout bounds a one-shot ssh command (listing or killing remote sessions) when the
// caller's context has no deadline: ConnectTimeout covers the connection, this the rest.
const remoteTimeout = 15 * time.Second

// remoteName is what a host, user or tmux session name may contain: nothing a remote shell or
// ssh's option parser would read as syntax.
var remoteName = regexp.MustCompile(`^[A-Za-z0-9_.@%:\[\]-]+$`)

func (t SSHTarget) check() error {
	switch {
	case t.Host == "" || !remoteName.MatchString(t.Host) || strings.HasPrefix(t.Host, "-"):
		return fmt.Errorf("ssh host %q is not a host name or address: fix it in the saved server", t.Host)
	case t.User != "" && (!remoteName.MatchString(t.User) || strings.HasPrefix(t.User, "-")):
		return fmt.Errorf("ssh user %q has characters ssh cannot take: fix it in the saved server", t.User)
	case t.Port < 0 || t.Port > 65535:
		return fmt.Errorf("ssh port %d is not a port: use 1–65535, or 0 for the default", t.Port)
	}
	return nil
}

// options are the ssh arguments before the destination.
func (t SSHTarget) options() []string {
	var args []string
	if t.Port != 0 {
		args = append(args, "-p", strconv.Itoa(t.Port))
	}
	if t.KeyPath != "" {
		args = append(args, "-i", t.KeyPath)
	}
	return args
}

func (t SSHTarget) destination() string {
	if t.User == "" {
		return t.Host
	}
	return t.User + "@" + t.Host
}

// TmuxSessionName is the remote tmux session of a pane: clusterspace-pane-<first 8 hex of the
// pane id after its "pane-" prefix>.
func TmuxSessionName(paneID string) string {
	id := strings.TrimPrefix(paneID, "pane-")
	var b strings.Builder
	for _, c := range id {
		if b.Len() == 8 {
			break
		}
		if c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			b.WriteRune(c)
		}
	}
	return "clusterspace-pane-" + b.String()
}

// SSHCommand is the command line of an SSH pane: ssh -t [-p PORT] [-i KEY] user@host tmux
// new-session -A -s <TmuxSessionName>, so the remote session outlives disconnects and the pane
// reattaches to it. The name comes from the pane, so every SSH tab of a pane shows the same
// remote session.
func SSHCommand(t SSHTarget, paneID string) ([]string, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	args := append([]string{"ssh", "-t"}, t.options()...)
	return append(args, t.destination(), "tmux", "new-session", "-A", "-s", TmuxSessionName(paneID)), nil
}

// RemoteSession is a tmux session on an SSH server.
type RemoteSession struct {
	Name     string    `json:"name"`
	Windows  int       `json:"windows"`
	Attached bool      `json:"attached"`
	Created  time.Time `json:"created"`
	Pane     bool      `json:"pane"` // named like a ClusterSpace pane's session
}

// oneShot runs a command on the server without a terminal or prompts: BatchMode means key
// authentication only (a password-only server fails fast instead of asking).
func (m *Manager) oneShot(ctx context.Context, t SSHTarget, remote ...string) ([]byte, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, remoteTimeout)
		defer cancel()
	}
	args := append(slices.Clip(m.opts.SSHOptions), "-o", "BatchMode=yes", "-o", "ConnectTimeout=5")
	args = append(args, t.options()...)
	args = append(append(args, t.destination()), remote...)
	cmd := exec.CommandContext(ctx, m.opts.SSH, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		var ee *exec.ExitError
		switch {
		case ctx.Err() != nil:
			return out, fmt.Errorf("ssh %s: no answer in time: check the host and that it is reachable", t)
		case errors.As(err, &ee) && ee.ExitCode() == 255 && strings.Contains(msg, "Permission denied"):
			return out, fmt.Errorf("ssh %s: %s: this needs key authentication (a key path, or a key in your agent)", t, msg)
		case errors.As(err, &ee) && ee.ExitCode() == 255:
			return out, fmt.Errorf("ssh %s: %s", t, msg)
		}
		return out, &remoteError{msg: msg, err: err}
	}
	return out, nil
}

// remoteError is a remote command that ran and failed.
type remoteError struct {
	msg string
	err error
}

func (e *remoteError) Error() string { return e.msg }
func (e *remoteError) Unwrap() error { return e.err }

// RemoteSessions lists the tmux sessions on the server (none when no tmux server runs).
func (m *Manager) RemoteSessions(ctx context.Context, t SSHTarget) ([]RemoteSession, error) {
	// Space-separated with the name last: tmux prints a format's "\t" as two characters, and a
	// name may hold spaces.
	out, err := m.oneShot(ctx, t, "tmux", "list-sessions", "-F",
		"'#{session_windows} #{session_attached} #{session_created} #{session_name}'")
	var re *remoteError
	if errors.As(err, &re) {
		switch {
		case strings.Contains(re.msg, "no server running"), strings.Contains(re.msg, "error connecting to"):
			return nil, nil
		case strings.Contains(re.msg, "not found"):
			return nil, fmt.Errorf("ssh %s: tmux is not installed there: install it to keep sessions across disconnects", t)
		}
		return nil, fmt.Errorf("ssh %s: tmux list-sessions: %s", t, re.msg)
	}
	if err != nil {
		return nil, err
	}
	var sessions []RemoteSession
	for line := range strings.Lines(string(out)) {
		f := strings.SplitN(strings.TrimRight(line, "\r\n"), " ", 4)
		if len(f) != 4 {
			continue
		}
		windows, _ := strconv.Atoi(f[0])  // Best effort: tmux always prints numbers here.
		attached, _ := strconv.Atoi(f[1]) // as above
		created, _ := strconv.ParseInt(f[2], 10, 64)
		sessions = append(sessions, RemoteSession{Name: f[3], Windows: windows, Attached: attached > 0,
			Created: time.Unix(created, 0), Pane: strings.HasPrefix(f[3], "clusterspace-pane-")})
	}
	return sessions, nil
}

// KillRemoteSession ends a tmux session on the server.
func (m *Manager) KillRemoteSession(ctx context.Context, t SSHTarget, name string) error {
	if !remoteName.MatchString(name) || strings.ContainsAny(name, ":.") {
		return fmt.Errorf("tmux session name %q is not one tmux lists: pick one from the list", name)
	}
	_, err := m.oneShot(ctx, t, "tmux", "kill-session", "-t", "="+name)
	var re *remoteError
	if errors.As(err, &re) {
		return fmt.Errorf("ssh %s: tmux kill-session %s: %s", t, name, re.msg)
	}
	return err
}

package mcpserve

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/clusterspace/clusterspace/backend/tools"
)

// SocketFile is the Unix socket in the data dir on which the data dir's owner (serve, the
// desktop window) serves MCP for `clusterspace mcp` to attach to. It is 0600 inside the 0700
// data dir, every connection's peer must be this user, and the data dir is out of every
// confined goal's reach.
const SocketFile = "mcp.sock"

// maxBodyBytes bounds one request: a tool call's arguments (text to type, a script) are small.
const maxBodyBytes = 4 << 20

// localCeiling is the ceiling of a client on the socket that presents no token: a person's own
// `clusterspace mcp` attached to their running app reads freely, and every call that changes
// something waits for them in the app.
const localCeiling = tools.ReadOnly

// Handler serves MCP over streamable HTTP, one client per request, each request authenticated:
// a token from `clusterspace mcp token create` as "Authorization: Bearer TOKEN", or (only when
// local) the peer on the data dir's socket. Anything else is answered 401 before MCP sees it.
func (s *Service) Handler(tokens *Tokens, version string, local bool) http.Handler {
	type clientKey struct{}
	h := sdk.NewStreamableHTTPHandler(func(r *http.Request) *sdk.Server {
		c, _ := r.Context().Value(clientKey{}).(Client)
		return s.Server(c, version)
	}, &sdk.StreamableHTTPOptions{
		// Stateless: each request is authenticated and served on its own, so no session id
		// can carry one client's identity to another's requests.
		Stateless: true, JSONResponse: true, Logger: s.deps.Logger, MaxRequestBodyBytes: maxBodyBytes,
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var c Client
		header := r.Header.Get("Authorization")
		token, bearer := strings.CutPrefix(header, "Bearer ")
		switch {
		case bearer && token != "":
			t, ok := tokens.Check(token)
			if !ok {
				unauthorized(w, "this MCP token is not valid (revoked, or never made here): make one with clusterspace mcp token create NAME")
				return
			}
			c = Client{Name: t.Name, Ceiling: t.Risk, PaneID: t.PaneID}
		case local && header == "":
			c = Client{Name: "local", Ceiling: localCeiling}
		default:
			unauthorized(w, "MCP needs a token: send Authorization: Bearer TOKEN, made with clusterspace mcp token create NAME")
			return
		}
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), clientKey{}, c)))
	})
}

func unauthorized(w http.ResponseWriter, msg string) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="clusterspace-mcp"`)
	http.Error(w, msg, http.StatusUnauthorized)
}

// Local serves MCP on the data dir's socket for `clusterspace mcp` run beside its owner.
type Local struct {
	srv  *http.Server
	ln   net.Listener
	path string
	wg   sync.WaitGroup
}

// ListenLocal opens the data dir's socket (removing one a crashed owner left: only the
// data dir's owner calls this) and serves h on it until Close.
func ListenLocal(dataDir string, h http.Handler) (*Local, error) {
	path := filepath.Join(dataDir, SocketFile)
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("remove the old MCP socket %s: %w", path, err)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("listen on the MCP socket %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, err
	}
	l := &Local{ln: sameUser{ln.(*net.UnixListener)}, path: path,
		srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		l.srv.Serve(l.ln) // Best effort: it ends with Close (http.ErrServerClosed).
	}()
	return l, nil
}

// Close stops serving, ends the calls in flight and removes the socket.
func (l *Local) Close() error {
	err := l.srv.Close()
	l.wg.Wait()
	os.Remove(l.path) // Best effort: closing a Unix listener removes it already.
	return err
}

// sameUser accepts only connections from processes of this user: the socket's mode says so
// too, but a process that was handed an open descriptor to it would pass the mode.
type sameUser struct{ *net.UnixListener }

func (s sameUser) Accept() (net.Conn, error) {
	for {
		c, err := s.UnixListener.AcceptUnix()
		if err != nil {
			return nil, err
		}
		if peerIsUs(c) {
			return c, nil
		}
		c.Close()
	}
}

func peerIsUs(c *net.UnixConn) bool {
	raw, err := c.SyscallConn()
	if err != nil {
		return false
	}
	var cred *syscall.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil || credErr != nil {
		return false
	}
	return int(cred.Uid) == os.Getuid()
}

// Package server is the headless door: the same services as the desktop window, over HTTP and
// a WebSocket, behind a password login and JWTs, serving the built frontend to any browser.
package server

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/clusterspace/clusterspace/backend/api"
	"github.com/clusterspace/clusterspace/backend/rpc"

	"github.com/clusterspace/clusterspace/backend/pubsub"
)

// DefaultAddr is loopback only: the server is reachable from other machines only on request.
const DefaultAddr = "127.0.0.1:4444"

// Connection timeouts, so a client that sends slowly (or not at all) cannot hold a connection
// and its goroutine forever. The read timeout covers reading one request, body included (up
// to a 1 MiB workspace import on a slow link); net/http lifts it once the body is read and when
// a WebSocket hijacks the connection, so long handlers and WebSockets are not cut (a test
// holds it to that).
const (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = 30 * time.Second
	idleTimeout       = 2 * time.Minute
)

// shutdownGrace is how long in-flight requests get to finish when the server stops.
const shutdownGrace = 5 * time.Second

// Config is how the server listens and what it serves.
type Config struct {
	Addr string
	// AllowRemote must be set to listen on a non-loopback address.
	AllowRemote bool
	// AllowedOrigins are extra browser origins (scheme://host:port) allowed to open the
	// WebSocket, besides the server's own.
	AllowedOrigins []string
	// Frontend is the built UI (frontend/dist); nil serves a page saying to build it.
	Frontend fs.FS
	Version  string
	Logger   *slog.Logger
}

// Deps are the services the server exposes.
type Deps struct {
	// Services are the engine's services its table of calls uses (api.ForEngine has them all);
	// the server sets their Version from Config and their RevealGuard to its password check.
	api.Services
	Auth *Auth
	// Events are the streams forwarded to every WebSocket client.
	Events []pubsub.Source
	// MCPServer is ClusterSpace as an MCP server (backend/mcpserve), served at /mcp; nil: none. It
	// authenticates every request itself, by the client's MCP token, not a login.
	MCPServer http.Handler
}

// Server is the HTTP + WebSocket door.
type Server struct {
	cfg  Config
	deps Deps
	// calls is the table of calls the UI makes (package api), served at /api/rpc/{name}.
	calls   *rpc.Table
	lockout *Lockout
	devices *devices
	unlock  unlockCode
	// loginSlots is a semaphore of maxConcurrentLogins.
	loginSlots chan struct{}
	log        *slog.Logger
	mux        *http.ServeMux
	// ctx ends when the server shuts down; WebSocket handlers watch it because
	// http.Server.Shutdown does not wait for hijacked connections.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// loopback: the server listens on a loopback address, so only loopback Host names are
	// served (DNS rebinding).
	loopback bool
	// port is the port Serve listens on, checked in the Host header; empty until Serve.
	port atomic.Value
	// Timeouts, from the constants above and loginBodyTimeout; tests shorten them.
	readHeaderTimeout, readTimeout, idleTimeout, loginBodyTimeout time.Duration
}

// New builds the server and its route table.
func New(cfg Config, deps Deps) (*Server, error) {
	if deps.Auth == nil || deps.Workspaces == nil || deps.Providers == nil || deps.Terminals == nil || deps.Goals == nil || deps.Settings == nil || deps.SSH == nil || deps.Browsers == nil || deps.Chat == nil {
		return nil, errors.New("server: Auth, Workspaces, Providers, Terminals, Browsers, Goals, Chat, SSH and Settings are required")
	}
	if cfg.Addr == "" {
		cfg.Addr = DefaultAddr
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{cfg: cfg, deps: deps, lockout: NewLockout(time.Now), devices: newDevices(time.Now),
		loginSlots: make(chan struct{}, maxConcurrentLogins), log: cfg.Logger, ctx: ctx, cancel: cancel}
	remote, _ := CheckAddr(cfg.Addr, true)
	s.loopback = !remote
	s.readHeaderTimeout, s.readTimeout, s.idleTimeout = readHeaderTimeout, readTimeout, idleTimeout
	s.loginBodyTimeout = loginBodyTimeout
	s.mux = http.NewServeMux()
	services := deps.Services
	services.Version, services.RevealGuard = cfg.Version, s.revealGuard
	s.calls = api.New(services)
	// The table's calls: POST /api/rpc/{name} and their REST routes, all behind the login.
	for _, c := range s.calls.HTTP(api.HTTPErrors, maxBodyBytes) {
		s.mux.HandleFunc(c.Pattern, s.requireAuth(c.Handler))
	}
	for _, r := range s.routes() {
		h := r.handler
		if !r.public {
			h = s.requireAuth(h)
		}
		s.mux.HandleFunc(r.method+" "+r.pattern, h)
	}
	s.mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no API route %s %s", r.Method, r.URL.Path), "")
	})
	if deps.MCPServer != nil {
		s.mux.Handle("/mcp", deps.MCPServer)
	}
	s.mux.Handle("/", s.static())
	return s, nil
}

// Handler is the server's root handler, with security headers on every response.
func (s *Server) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.hostAllowed(r.Host) {
			writeError(w, http.StatusMisdirectedRequest, fmt.Sprintf("this server answers to localhost, not %q: open it at http://localhost:<port>, or start serve with --allowed-origin for that name", r.Host), "")
			return
		}
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Content-Security-Policy", "default-src 'self'; connect-src 'self' ws: wss:; img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'")
		s.mux.ServeHTTP(w, r)
	})
}

// hostAllowed protects a loopback server from DNS rebinding: a page on evil.example whose
// name is made to resolve to 127.0.0.1 reaches the server with Host: evil.example, and is
// refused. A loopback IP literal or "localhost" cannot be rebound; names from --allowed-origin
// are the owner's choice. A server that listens remotely is reached by any name.
func (s *Server) hostAllowed(host string) bool {
	if !s.loopback {
		return true
	}
	name, port, err := net.SplitHostPort(host)
	if err != nil {
		name, port = strings.Trim(host, "[]"), ""
	}
	for _, o := range s.cfg.AllowedOrigins {
		if u, err := url.Parse(o); err == nil && u.Host != "" && (strings.EqualFold(u.Host, host) || strings.EqualFold(u.Hostname(), host)) {
			return true
		}
	}
	ip := net.ParseIP(name)
	if !strings.EqualFold(name, "localhost") && (ip == nil || !ip.IsLoopback()) {
		return false
	}
	want, _ := s.port.Load().(string)
	return want == "" || port == want
}

// CheckAddr refuses a non-loopback address unless remote access was asked for, and says
// whether the address is reachable from other machines.
func CheckAddr(addr string, allowRemote bool) (remote bool, err error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, fmt.Errorf("--addr %q: %v: use host:port, e.g. %s", addr, err, DefaultAddr)
	}
	if host == "localhost" {
		return false, nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return false, nil
	}
	if !allowRemote {
		shown := host
		if shown == "" {
			shown = "every interface"
		}
		return true, fmt.Errorf("--addr %q listens on %s, reachable from other machines: pass --allow-remote to do that on purpose, or use 127.0.0.1", addr, shown)
	}
	return true, nil
}

// Listen opens the listening socket, so the caller learns the real address (for port 0)
// before serving.
func (s *Server) Listen() (net.Listener, error) { return Listen(s.cfg.Addr, s.cfg.AllowRemote) }

// Listen opens addr's listening socket after CheckAddr. serve opens it before anything else,
// so the engine knows the real address (port 0 resolved) and no goal's proxy lets a goal
// reach it.
func Listen(addr string, allowRemote bool) (net.Listener, error) {
	if _, err := CheckAddr(addr, allowRemote); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w: pick another --addr", addr, err)
	}
	return ln, nil
}

// Serve answers requests on ln until ctx ends, then shuts down gracefully.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	if _, port, err := net.SplitHostPort(ln.Addr().String()); err == nil {
		s.port.Store(port)
	}
	hs := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: s.readHeaderTimeout, ReadTimeout: s.readTimeout,
		IdleTimeout: s.idleTimeout}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		s.cancel()
		s.wg.Wait()
		return err
	case <-ctx.Done():
	}
	s.cancel() // ends the WebSockets
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	err := hs.Shutdown(sctx)
	s.wg.Wait()
	if e := <-errc; !errors.Is(e, http.ErrServerClosed) && err == nil {
		err = e
	}
	return err
}

// Close ends the WebSocket connections and waits for their goroutines (for tests that use
// Handler with httptest).
func (s *Server) Close() {
	s.cancel()
	s.wg.Wait()
}

// clientAddr is the connection's IP, from which lockSource finds what lockouts count against.
// Forwarded headers are ignored because any client can set them.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// sessionKey carries the caller's login session in an authenticated request's context.
type sessionKey struct{}

// verifyAccess checks an access token; when there is none (missing says how to send one) or
// it is refused, it answers 401 and returns ok false.
func (s *Server) verifyAccess(w http.ResponseWriter, token, missing string) (expires time.Time, sess *session, ok bool) {
	if token == "" {
		writeError(w, http.StatusUnauthorized, missing, "")
		return time.Time{}, nil, false
	}
	expires, sess, err := s.deps.Auth.Verify(token, tokenAccess)
	if err != nil {
		writeError(w, http.StatusUnauthorized, "the access token was refused ("+err.Error()+"): refresh it or log in again", "")
		return time.Time{}, nil, false
	}
	return expires, sess, true
}

func (s *Server) requireAuth(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok {
			token = "" // another scheme is no token
		}
		_, sess, ok := s.verifyAccess(w, token, "log in first: this route needs an Authorization: Bearer token")
		if !ok {
			return
		}
		ctx := context.WithValue(r.Context(), sessionKey{}, sess)
		next(w, r.WithContext(context.WithValue(ctx, addrKey{}, clientAddr(r))))
	}
}

// Package egress is the only way out of a confined goal's network namespace: an HTTP proxy
// (CONNECT for TLS, plain requests for http://) on a Unix socket, one per goal, that decides
// every connection by the goal's risk ceiling and never leads back into this machine. The
// app's own services listen on loopback (`serve`, Chromium's DevTools port, MCP HTTP
// servers); a goal must not reach them, whatever it is told by a page it reads.
package egress

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/clusterspace/clusterspace/backend/tools"
)

// Limits of one proxied connection.
const (
	// dialTimeout bounds connecting to the destination, as a browser would.
	dialTimeout = 30 * time.Second
	// headerTimeout bounds reading a request's head from the sandbox.
	headerTimeout = 30 * time.Second
	// halfCloseGrace is how long a tunnel whose one side ended waits for the other.
	halfCloseGrace = 30 * time.Second
)

// Rules decide what a goal may reach.
type Rules struct {
	// Ceiling is the goal's risk ceiling: below network_get nothing goes out; at network_get
	// only reads (GET, HEAD, OPTIONS; CONNECT to the web's ports 443 and 80, whose requests
	// the proxy cannot see inside TLS); from network_write on, any method and port.
	Ceiling tools.Risk
	// AllowLocal lists loopback ports the person opened to the goal (a dev server of theirs):
	// host:port pairs on this machine that are not the app's own.
	AllowLocal []string
	// Never lists ports of the app's own services; they are refused even if AllowLocal
	// or AgentHosts names them.
	Never []string
	// AgentHosts are the host:port pairs of the provider API an agent pane of the goal talks
	// to (its template's hosts, or the provider the person assigned to it): reachable with any
	// method whatever the ceiling, as the agent's own model calls are not the goal's actions,
	// and on this machine too when the assigned provider runs here.
	AgentHosts []string
}

// Refusal is why a destination or method was refused, as the goal's program sees it.
type Refusal struct{ Msg string }

func (r *Refusal) Error() string { return r.Msg }

// Check decides one request: method (CONNECT for a tunnel), host and port.
func (r Rules) Check(method, host string, port int, addrs []net.IP) error {
	if r.agentHost(host, port) {
		for _, ip := range addrs {
			for _, n := range r.Never {
				if samePort(n, ip, port) {
					return &Refusal{fmt.Sprintf("%s is one of the app's own services, outside a confined goal's reach", net.JoinHostPort(host, strconv.Itoa(port)))}
				}
			}
		}
		return nil
	}
	if r.Ceiling < tools.NetworkGet {
		return &Refusal{fmt.Sprintf("this goal's risk ceiling is %s: it has no network (network_get or above gives it one)", r.Ceiling)}
	}
	if r.Ceiling < tools.NetworkWrite {
		switch method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
		case http.MethodConnect:
			if port != 443 && port != 80 {
				return &Refusal{fmt.Sprintf("at network_get a goal may open TLS tunnels to ports 443 and 80 only, not %d (network_write allows any)", port)}
			}
		default:
			return &Refusal{fmt.Sprintf("%s is a write; this goal's ceiling network_get allows GET, HEAD and OPTIONS", method)}
		}
	}
	hostPort := net.JoinHostPort(host, strconv.Itoa(port))
	for _, ip := range addrs {
		if !local(ip) {
			continue
		}
		allowed := false
		for _, a := range r.AllowLocal {
			if samePort(a, ip, port) {
				allowed = true
			}
		}
		for _, n := range r.Never {
			if samePort(n, ip, port) {
				allowed = false
			}
		}
		if !allowed {
			return &Refusal{fmt.Sprintf("%s is on this machine (%s): the app's own and other local services are outside a confined goal's reach", hostPort, ip)}
		}
	}
	return nil
}

// agentHost reports whether host:port is one of AgentHosts (names compared without case).
func (r Rules) agentHost(host string, port int) bool {
	want := net.JoinHostPort(strings.ToLower(strings.TrimSuffix(host, ".")), strconv.Itoa(port))
	for _, a := range r.AgentHosts {
		if strings.ToLower(a) == want {
			return true
		}
	}
	return false
}

// samePort reports whether the listed host:port is ip:port (a listed loopback host matches any
// loopback address, as every 127.x reaches the same services; a listener on every address,
// 0.0.0.0 or :: or no host, matches every address of this machine).
func samePort(listed string, ip net.IP, port int) bool {
	h, p, err := net.SplitHostPort(listed)
	if err != nil || p != strconv.Itoa(port) {
		return false
	}
	lip := net.ParseIP(h)
	switch {
	case h == "localhost" || (lip != nil && lip.IsLoopback()):
		return ip.IsLoopback()
	case h == "" || (lip != nil && lip.IsUnspecified()):
		return local(ip) // a listener on every address answers on each of this machine's
	}
	return lip != nil && lip.Equal(ip)
}

// local reports whether ip leads into this machine or its link: loopback, unspecified (0.0.0.0
// reaches local listeners), link-local, multicast, or one of this machine's own addresses.
func local(ip net.IP) bool {
	if ip.IsLoopback() || ip.IsUnspecified() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() {
		return true
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return true // not knowing this machine's addresses must not open them
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
			return true
		}
	}
	return false
}

// Proxy serves one goal's egress on a Unix socket.
type Proxy struct {
	rules  Rules
	ln     net.Listener
	path   string
	log    *slog.Logger
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// resolve and dial are the network's; tests keep them.
	resolve func(ctx context.Context, host string) ([]net.IP, error)
	dial    func(ctx context.Context, addr string) (net.Conn, error)
}

// Start listens on a new socket in dir (created 0700 if missing, and not inside any sandbox:
// the goal must not be able to swap it) and serves until Close.
func Start(dir, name string, rules Rules, log *slog.Logger) (*Proxy, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("egress proxy dir %q cannot be created (%v): pick a writable runtime dir", dir, err)
	}
	path := filepath.Join(dir, name+".sock")
	_ = os.Remove(path) // Best effort: a socket left by a crash.
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("egress proxy socket %q: %w", path, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var d net.Dialer
	p := &Proxy{rules: rules, ln: ln, path: path, log: log, ctx: ctx, cancel: cancel,
		resolve: func(ctx context.Context, host string) ([]net.IP, error) {
			if ip := net.ParseIP(host); ip != nil {
				return []net.IP{ip}, nil
			}
			return net.DefaultResolver.LookupIP(ctx, "ip", host)
		},
		dial: func(ctx context.Context, addr string) (net.Conn, error) { return d.DialContext(ctx, "tcp", addr) }}
	p.wg.Add(1)
	go p.serve()
	return p, nil
}

// Path is the socket to hand to the sandbox.
func (p *Proxy) Path() string { return p.path }

// Close stops the proxy, ends every connection it relays and waits for them.
func (p *Proxy) Close() error {
	p.cancel()
	err := p.ln.Close()
	p.wg.Wait()
	_ = os.Remove(p.path) // Best effort: the listener may have removed it.
	return err
}

func (p *Proxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.handle(c)
		}()
	}
}

// handle serves one connection from the sandbox: one CONNECT tunnel, or plain requests.
func (p *Proxy) handle(c net.Conn) {
	stop := context.AfterFunc(p.ctx, func() { c.Close() })
	defer stop()
	defer c.Close()
	br := bufio.NewReader(c)
	for {
		_ = c.SetReadDeadline(time.Now().Add(headerTimeout))
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		_ = c.SetReadDeadline(time.Time{})
		if req.Method == http.MethodConnect {
			p.tunnel(c, br, req)
			return
		}
		if !p.forward(c, req) {
			return
		}
	}
}

// target resolves and checks where a request goes; it returns the address to dial (by IP,
// so a name that resolves elsewhere a second time cannot slip past the check).
func (p *Proxy) target(method, hostport, defaultPort string) (string, error) {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = hostport, defaultPort
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return "", &Refusal{fmt.Sprintf("%q is not a host:port", hostport)}
	}
	host = strings.Trim(host, "[]")
	ctx, cancel := context.WithTimeout(p.ctx, dialTimeout)
	defer cancel()
	ips, err := p.resolve(ctx, host)
	if err != nil || len(ips) == 0 {
		return "", fmt.Errorf("cannot resolve %s: %v", host, err)
	}
	if err := p.rules.Check(method, host, n, ips); err != nil {
		return "", err
	}
	return net.JoinHostPort(ips[0].String(), port), nil
}

func (p *Proxy) tunnel(c net.Conn, br *bufio.Reader, req *http.Request) {
	addr, err := p.target(req.Method, req.Host, "443")
	if err != nil {
		p.refuse(c, req, err)
		return
	}
	ctx, cancel := context.WithTimeout(p.ctx, dialTimeout)
	up, err := p.dial(ctx, addr)
	cancel()
	if err != nil {
		p.refuse(c, req, err)
		return
	}
	defer up.Close()
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	relay(c, br, up)
}

// forward sends one plain http:// request on and its answer back; false ends the connection.
func (p *Proxy) forward(c net.Conn, req *http.Request) bool {
	if req.URL.Scheme != "http" || req.URL.Host == "" {
		p.refuse(c, req, &Refusal{"a proxy request needs an absolute http:// URL (use CONNECT for https)"})
		return false
	}
	addr, err := p.target(req.Method, req.URL.Host, "80")
	if err != nil {
		p.refuse(c, req, err)
		return false
	}
	ctx, cancel := context.WithTimeout(p.ctx, dialTimeout)
	up, err := p.dial(ctx, addr)
	cancel()
	if err != nil {
		p.refuse(c, req, err)
		return false
	}
	defer up.Close()
	req.RequestURI = ""
	req.Header.Del("Proxy-Connection")
	req.Header.Del("Proxy-Authorization")
	req.Close = true
	if err := req.Write(up); err != nil {
		p.refuse(c, req, err)
		return false
	}
	resp, err := http.ReadResponse(bufio.NewReader(up), req)
	if err != nil {
		p.refuse(c, req, err)
		return false
	}
	defer resp.Body.Close()
	resp.Close = true
	_ = resp.Write(c) // Best effort: the sandbox may have hung up.
	return false
}

// refuse answers a request the proxy will not (or cannot) carry, saying why.
func (p *Proxy) refuse(c net.Conn, req *http.Request, err error) {
	status := http.StatusBadGateway
	if errors.As(err, new(*Refusal)) {
		status = http.StatusForbidden
		p.log.Info("egress refused", "method", req.Method, "host", req.Host, "why", err.Error())
	}
	msg := "ClusterSpace sandbox: " + err.Error() + "\n"
	fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		status, http.StatusText(status), len(msg), msg)
}

// relay copies both ways until either side ends.
func relay(c net.Conn, br *bufio.Reader, up net.Conn) {
	done := make(chan struct{}, 2)
	go func() {
		_, _ = io.Copy(up, br) // Best effort: a tunnel ends when either side does.
		closeWrite(up)
		done <- struct{}{}
	}()
	go func() {
		_, _ = io.Copy(c, up)
		closeWrite(c)
		done <- struct{}{}
	}()
	<-done
	// One side has ended: give the other a moment to finish its half, then end both.
	select {
	case <-done:
	case <-time.After(halfCloseGrace):
		c.Close()
		up.Close()
		<-done
	}
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
		return
	}
	_ = c.Close()
}

// localLookup bounds resolving a host name for CheckURL.
const localLookup = 3 * time.Second

// CheckURL decides whether a confined goal may have the browser open raw (a whole URL): only
// its destination counts (the ceiling is the policy's to judge). Schemes other than http(s)
// lead nowhere on the network.
func (r Rules) CheckURL(ctx context.Context, raw string) error {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return nil // not a network address: the tool (and the path checks) judge it
	}
	port := 443
	if u.Scheme == "http" {
		port = 80
	}
	if p := u.Port(); p != "" {
		if port, err = strconv.Atoi(p); err != nil {
			return &Refusal{fmt.Sprintf("%q has no valid port", raw)}
		}
	}
	host := u.Hostname()
	ips := []net.IP{net.ParseIP(host)}
	if ips[0] == nil {
		ctx, cancel := context.WithTimeout(ctx, localLookup)
		defer cancel()
		if ips, err = net.DefaultResolver.LookupIP(ctx, "ip", host); err != nil {
			return nil // unknown names lead nowhere local; the browser reports them
		}
	}
	r.Ceiling = tools.SpendsMoney
	return r.Check(http.MethodGet, host, port, ips)
}

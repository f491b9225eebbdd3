package server

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// serveReal runs the harness's server through Serve (the real http.Server with its timeouts)
// on a free loopback port, after shorten has adjusted it, and returns its base URL.
func serveReal(t *testing.T, h *harness, shorten func(*Server)) string {
	t.Helper()
	if shorten != nil {
		shorten(h.srv)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.srv.Serve(ctx, ln) }()
	t.Cleanup(func() { cancel(); <-done })
	return "http://" + ln.Addr().String()
}

// dialReal serves a new harness through serveReal and opens a raw connection to it, closed
// when the test ends; it returns the connection and the server's host:port.
func dialReal(t *testing.T, shorten func(*Server)) (net.Conn, string) {
	t.Helper()
	hostport := strings.TrimPrefix(serveReal(t, newHarness(t), shorten), "http://")
	conn, err := net.Dial("tcp", hostport)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn, hostport
}

// TestSlowLoginBodyIsDropped: a client that trickles its login body byte by byte cannot hold
// a connection (and a login slot) for longer than the read timeout.
func TestSlowLoginBodyIsDropped(t *testing.T) {
	const timeout = time.Second
	conn, hostport := dialReal(t, func(s *Server) { s.readTimeout = timeout })
	body := rightLogin
	fmt.Fprintf(conn, "POST /api/login HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n",
		hostport, len(body))
	start := time.Now()
	closed := make(chan time.Duration, 1)
	go func() {
		io.Copy(io.Discard, conn) // returns when the server closes the connection
		closed <- time.Since(start)
	}()
	// One byte every 200 ms would take len(body)/5 s ≈ 8 s; the server must give up after ~1 s.
	ticker := time.NewTicker(200 * time.Millisecond)
	defer ticker.Stop()
	for i := 0; i < len(body)-1; i++ {
		select {
		case took := <-closed:
			if took > timeout+2*time.Second {
				t.Fatalf("the server dropped the slow body after %s, want about %s", took, timeout)
			}
			return
		case <-ticker.C:
			conn.Write([]byte{body[i]}) // Best effort: the server may have closed already.
		}
	}
	t.Fatalf("the server read a body trickled over %s without dropping it", time.Since(start))
}

func TestSlowHeadersAreDropped(t *testing.T) {
	conn, hostport := dialReal(t, func(s *Server) { s.readHeaderTimeout = 500 * time.Millisecond })
	fmt.Fprintf(conn, "GET /api/version HTTP/1.1\r\nHost: %s\r\n", hostport) // never finished
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	start := time.Now()
	io.Copy(io.Discard, conn)
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("unfinished headers held the connection for %s", took)
	}
}

// TestWebSocketOutlivesTheReadTimeout: the read timeout is for reading a request, not for a
// WebSocket that stays open for hours; nor does it cut a handler that runs past it.
func TestWebSocketOutlivesTheReadTimeout(t *testing.T) {
	h := newHarness(t)
	base := serveReal(t, h, func(s *Server) { s.readTimeout = 300 * time.Millisecond; s.readHeaderTimeout = 300 * time.Millisecond })
	// A handler that reads its body and then works longer than the read timeout keeps its
	// context: net/http cancels it when the deadline fires while the handler runs.
	h.srv.mux.HandleFunc("POST /api/test-slow", func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		select {
		case <-r.Context().Done():
			w.WriteHeader(http.StatusGone)
		case <-time.After(time.Second):
			w.WriteHeader(http.StatusNoContent)
		}
	})
	h.http.URL = base // dialWS and do go to the real server from here on
	for _, body := range []string{"", `{"some":"body"}`} {
		if resp, _ := h.do(t, "POST", "/api/test-slow", "", body); resp.StatusCode != http.StatusNoContent {
			t.Fatalf("a handler running past the read timeout (body %q): %d, its context was cancelled", body, resp.StatusCode)
		}
	}
	tok := h.login(t)
	ctx, conn := h.openWS(t, tok.AccessToken, 10*time.Second)
	time.Sleep(1 * time.Second) // three read timeouts
	if resp, body := h.do(t, "POST", "/api/workspaces", tok.AccessToken, `{"name":"after the timeout"}`); resp.StatusCode != http.StatusCreated {
		t.Fatalf("create workspace: %d %s", resp.StatusCode, body)
	}
	for {
		_, msg, err := conn.Read(ctx)
		if err != nil {
			t.Fatalf("the WebSocket died after the read timeout: %v", err)
		}
		if strings.Contains(string(msg), "after the timeout") {
			return
		}
	}
}

func TestLoginConcurrencyIsCapped(t *testing.T) {
	h := newHarness(t)
	for range maxConcurrentLogins {
		h.srv.loginSlots <- struct{}{} // logins in flight
	}
	start := time.Now()
	resp, body := h.do(t, "POST", "/api/login", "", rightLogin)
	if resp.StatusCode != http.StatusServiceUnavailable || time.Since(start) > time.Second {
		t.Fatalf("login past the cap: %d after %s, want a quick 503 (%s)", resp.StatusCode, time.Since(start), body)
	}
	<-h.srv.loginSlots
	if resp, body := h.do(t, "POST", "/api/login", "", rightLogin); resp.StatusCode != 200 {
		t.Fatalf("login with a free slot: %d %s", resp.StatusCode, body)
	}
}

// TestSlowLoginBodiesDoNotStarveTheOwner: 48 connections from as many loopback addresses send
// login headers and then trickle the body, more than there are login slots; meanwhile the
// owner's ten prompt logins must all get in, promptly. Attackers cut off reconnect.
func TestSlowLoginBodiesDoNotStarveTheOwner(t *testing.T) {
	h := newHarness(t)
	base := serveReal(t, h, nil) // the real server, with its real timeouts
	hostport := strings.TrimPrefix(base, "http://")
	const attackers = 48
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	sent := make(chan struct{}, attackers)
	for i := range attackers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 1, byte(i+1))}}
			first := true
			for ctx.Err() == nil {
				conn, err := d.DialContext(ctx, "tcp", hostport)
				if err != nil {
					time.Sleep(50 * time.Millisecond)
					continue
				}
				stop := context.AfterFunc(ctx, func() { conn.Close() })
				fmt.Fprintf(conn, "POST /api/login HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 4000\r\n\r\n{\"password\":\"", hostport)
				if first {
					sent <- struct{}{}
					first = false
				}
				tick := time.NewTicker(200 * time.Millisecond)
				for ctx.Err() == nil {
					<-tick.C
					if _, err := conn.Write([]byte("x")); err != nil {
						break // cut off: come back on a new connection
					}
				}
				tick.Stop()
				stop()
				conn.Close()
			}
		}()
	}
	for range attackers {
		select {
		case <-sent:
		case <-time.After(10 * time.Second):
			t.Fatal("the slow clients could not all connect")
		}
	}
	time.Sleep(300 * time.Millisecond) // their handlers are running now
	owner := clientFrom("127.0.0.1")
	defer owner.CloseIdleConnections()
	for i := range 10 {
		start := time.Now()
		got := postLogin(t, owner, base, rightLogin, nil)
		if took := time.Since(start); got != 200 || took > 2*time.Second {
			t.Errorf("owner login %d among %d slow login bodies: %d after %s, want 200 at once", i+1, attackers, got, took.Round(time.Millisecond))
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// TestHostAllowListOnLoopback: DNS rebinding makes evil.example resolve to 127.0.0.1, so the
// attacker's page reaches a loopback server with its own name in Host.
func TestHostAllowListOnLoopback(t *testing.T) {
	h := newHarness(t)
	base := serveReal(t, h, nil)
	port := base[strings.LastIndex(base, ":")+1:]
	get := func(host string) int {
		t.Helper()
		conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "GET /api/version HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", host)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, host := range []string{"evil.example", "evil.example:" + port, "127.0.0.1.evil.example:" + port, "localhost:1", ""} {
		if got := get(host); got != http.StatusMisdirectedRequest && got != http.StatusBadRequest {
			t.Errorf("Host %q: %d, want 421", host, got)
		}
	}
	for _, host := range []string{"localhost:" + port, "127.0.0.1:" + port, "[::1]:" + port, "LOCALHOST:" + port} {
		if got := get(host); got != http.StatusUnauthorized { // past the Host check, stopped by auth
			t.Errorf("Host %q: %d, want 401", host, got)
		}
	}

	// A name given as --allowed-origin is served; a server listening remotely takes any name.
	h.srv.cfg.AllowedOrigins = []string{"http://box.lan:" + port}
	if got := get("box.lan:" + port); got != http.StatusUnauthorized {
		t.Errorf("allowed origin's host: %d, want 401", got)
	}
	h.srv.loopback = false
	if got := get("evil.example"); got != http.StatusUnauthorized {
		t.Errorf("remote server, any Host: %d, want 401", got)
	}
}

// TestLoginBodyHasItsOwnDeadline: a login body that trickles in is cut off after the login's
// own short deadline (not the server's 30 s read timeout) with an answer that says so.
func TestLoginBodyHasItsOwnDeadline(t *testing.T) {
	const deadline = 500 * time.Millisecond
	conn, hostport := dialReal(t, func(s *Server) { s.loginBodyTimeout = deadline })
	start := time.Now()
	fmt.Fprintf(conn, "POST /api/login HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"password\":\"", hostport)
	conn.SetReadDeadline(start.Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a stalled login body after %s: %v", time.Since(start), err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if took := time.Since(start); resp.StatusCode != http.StatusRequestTimeout || took > deadline+2*time.Second {
		t.Fatalf("stalled login body: %d after %s, want 408 after about %s (%s)", resp.StatusCode, took, deadline, body)
	}
	if !strings.Contains(string(body), "send it again") {
		t.Fatalf("the answer does not say what to do: %s", body)
	}
	if got := postLogin(t, http.DefaultClient, "http://"+hostport, rightLogin, nil); got != 200 {
		t.Fatalf("a prompt login afterwards: %d, want 200", got)
	}
}

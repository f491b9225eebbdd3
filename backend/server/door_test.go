package server

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestLockSource(t *testing.T) {
	for _, tc := range []struct{ host, want string }{
		{"127.0.0.1", loopbackSource},
		{"127.45.6.7", loopbackSource},
		{"::1", loopbackSource},
		{"::ffff:127.9.9.9", loopbackSource},
		{"192.0.2.7", "192.0.2.7"},
		{"::ffff:192.0.2.7", "192.0.2.7"},
		{"2001:db8:1:2::5", "2001:db8:1:2::/64"},
		{"2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2::/64"},
		{"fe80::1%eth0", "fe80::/64"},
		{"not an ip", "not an ip"},
	} {
		if got := lockSource(tc.host); got != tc.want {
			t.Errorf("lockSource(%q) = %q, want %q", tc.host, got, tc.want)
		}
	}
}

// TestLoginBodyHasItsOwnDeadline: a login body that trickles in is cut off after the login's
// own short deadline (not the server's 30 s read timeout) with an answer that says so.
func TestLoginBodyHasItsOwnDeadline(t *testing.T) {
	h := newHarness(t)
	const deadline = 500 * time.Millisecond
	base := serveReal(t, h, func(s *Server) { s.loginBodyTimeout = deadline })
	hostport := strings.TrimPrefix(base, "http://")
	conn, err := net.Dial("tcp", hostport)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
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
	if got := postLogin(t, http.DefaultClient, base, rightLogin, nil); got != 200 {
		t.Fatalf("a prompt login afterwards: %d, want 200", got)
	}
}

package server

import (
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"testing"
)

const (
	rightLogin = `{"password":"` + testPassword + `"}`
	wrongLogin = `{"password":"nope"}`
)

// postLogin sends a login with the given client and headers and returns the status.
func postLogin(t *testing.T, c *http.Client, url, body string, hdr map[string]string) int {
	t.Helper()
	req, _ := http.NewRequest("POST", url+"/api/login", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// clientFrom returns a client whose connections come from the loopback address ip, so a test
// can play two machines.
func clientFrom(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
}

// TestLoginRefusalsAreNotCountedAsFailures: another site's page, a form post, or an empty
// password must not be able to spend the owner's failed-login allowance.
func TestLoginRefusalsAreNotCountedAsFailures(t *testing.T) {
	h := newHarness(t)
	c := http.DefaultClient
	for range 20 {
		if got := postLogin(t, c, h.http.URL, wrongLogin, map[string]string{"Origin": "http://evil.example"}); got != http.StatusForbidden {
			t.Fatalf("cross-origin login: %d, want 403", got)
		}
		if got := postLogin(t, c, h.http.URL, wrongLogin, map[string]string{"Content-Type": "text/plain"}); got != http.StatusUnsupportedMediaType {
			t.Fatalf("text/plain login: %d, want 415", got)
		}
		if got := postLogin(t, c, h.http.URL, "password=nope", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}); got != http.StatusUnsupportedMediaType {
			t.Fatalf("form login: %d, want 415", got)
		}
		if got := postLogin(t, c, h.http.URL, wrongLogin, map[string]string{"Content-Type": ""}); got != http.StatusUnsupportedMediaType {
			t.Fatalf("login without a content type: %d, want 415", got)
		}
		if got := postLogin(t, c, h.http.URL, `{"password":""}`, nil); got != http.StatusBadRequest {
			t.Fatalf("empty password: %d, want 400", got)
		}
	}
	// The page the server itself served may log in (same origin), at once.
	if got := postLogin(t, c, h.http.URL, rightLogin, map[string]string{"Origin": h.http.URL}); got != 200 {
		t.Fatalf("the owner after 100 refused attempts: %d, want 200", got)
	}
}

// TestLockoutOfOneAddressLeavesOthersAlone: a guesser on one address does not lock out another.
func TestLockoutOfOneAddressLeavesOthersAlone(t *testing.T) {
	h := newHarness(t)
	attacker := clientFrom("127.0.0.2")
	for range 10 {
		postLogin(t, attacker, h.http.URL, wrongLogin, nil)
	}
	if got := postLogin(t, attacker, h.http.URL, rightLogin, nil); got != http.StatusTooManyRequests {
		t.Fatalf("the guessing address: %d, want 429", got)
	}
	if got := postLogin(t, clientFrom("127.0.0.1"), h.http.URL, rightLogin, nil); got != 200 {
		t.Fatalf("another address: %d, want 200", got)
	}
}

// TestKnownBrowserIsNotLockedOutBySameAddress: every local process shares 127.0.0.1, so a goal
// failing logins on purpose locks that address; the owner's browser, which logged in before
// and holds the device cookie, still logs in.
func TestKnownBrowserIsNotLockedOutBySameAddress(t *testing.T) {
	h := newHarness(t)
	jar, _ := cookiejar.New(nil)
	owner := &http.Client{Jar: jar}
	if got := postLogin(t, owner, h.http.URL, rightLogin, nil); got != 200 {
		t.Fatalf("first login: %d", got)
	}
	for range 10 {
		postLogin(t, http.DefaultClient, h.http.URL, wrongLogin, nil)
	}
	if got := postLogin(t, http.DefaultClient, h.http.URL, rightLogin, nil); got != http.StatusTooManyRequests {
		t.Fatalf("a client without the cookie after 10 failures: %d, want 429", got)
	}
	if got := postLogin(t, owner, h.http.URL, rightLogin, nil); got != 200 {
		t.Fatalf("the owner's browser: %d, want 200", got)
	}
	// A made-up device id is just an unknown client, counted by address.
	req, _ := http.NewRequest("POST", h.http.URL+"/api/login", strings.NewReader(rightLogin))
	req.Header.Set("Content-Type", "application/json")
	req.AddCookie(&http.Cookie{Name: deviceCookie, Value: randomID(sessionIDBytes)})
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("a forged device cookie: %d, want 429", resp.StatusCode)
	}
}

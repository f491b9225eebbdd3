package server

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"regexp"
	"strconv"
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

// TestLockoutOfOneSourceLeavesOthersAlone: a guesser on one machine does not lock out another;
// an IPv6 guesser is counted by its /64, so hopping between addresses in it gains nothing. A test
// cannot dial from addresses outside loopback, so these requests go to the handler with the
// client's address set.
func TestLockoutOfOneSourceLeavesOthersAlone(t *testing.T) {
	h := newHarness(t)
	login := func(remote, body string) int {
		t.Helper()
		req := httptest.NewRequest("POST", "/api/login", strings.NewReader(body))
		req.Host = "localhost"
		req.RemoteAddr = remote
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.srv.Handler().ServeHTTP(rec, req)
		return rec.Code
	}
	for range 10 {
		login("192.0.2.7:40000", wrongLogin)
	}
	if got := login("192.0.2.7:40001", rightLogin); got != http.StatusTooManyRequests {
		t.Fatalf("the guessing address: %d, want 429", got)
	}
	if got := login("198.51.100.9:40000", rightLogin); got != 200 {
		t.Fatalf("another IPv4 address: %d, want 200", got)
	}
	for i := range 10 {
		login(fmt.Sprintf("[2001:db8:1:2::%x]:40000", i+1), wrongLogin)
	}
	if got := login("[2001:db8:1:2:ffff:ffff:ffff:ffff]:40000", rightLogin); got != http.StatusTooManyRequests {
		t.Fatalf("a fresh address in the guessing /64: %d, want 429", got)
	}
	if got := login("[2001:db8:1:3::1]:40000", rightLogin); got != 200 {
		t.Fatalf("an address in another /64: %d, want 200", got)
	}
	if got := postLogin(t, clientFrom("127.0.0.1"), h.http.URL, rightLogin, nil); got != 200 {
		t.Fatalf("this machine, while others are locked: %d, want 200", got)
	}
}

// TestLoopbackAddressesAreOneLockoutSource: any local process can dial from any 127.x.y.z, so
// guesses spread over many of them are counted together, and the lock holds for the next one.
func TestLoopbackAddressesAreOneLockoutSource(t *testing.T) {
	h := newHarness(t)
	for i := range 12 {
		c := clientFrom(fmt.Sprintf("127.0.%d.%d", 2+i/100, 2+i%100))
		if got := postLogin(t, c, h.http.URL, wrongLogin, nil); got != http.StatusUnauthorized && got != http.StatusTooManyRequests {
			t.Fatalf("wrong password #%d: %d, want 401 or 429", i+1, got)
		}
		c.CloseIdleConnections()
	}
	c := clientFrom("127.0.9.9") // yet another loopback address, with the right password
	defer c.CloseIdleConnections()
	req, _ := http.NewRequest("POST", h.http.URL+"/api/login", strings.NewReader(rightLogin))
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("a new loopback address after 12 wrong passwords from 12 others: %d, want 429", resp.StatusCode)
	}
	if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || secs <= 0 {
		t.Fatalf("the lockout answer has Retry-After %q, want seconds to wait", resp.Header.Get("Retry-After"))
	}
	if !strings.Contains(string(body), "try again in") {
		t.Fatalf("the lockout answer does not say what to do: %s", body)
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

// TestUnlockCodeFromTheLogLetsTheOwnerIn: a browser the server has never seen (a new one, or
// any after a restart) shares 127.0.0.1 with every local process, so a goal failing logins on
// purpose locks it out. The lockout writes a one-time code to the server's log; the owner types
// it with the password and gets in. The code works once, a wrong one is refused without
// counting, and the password is still checked.
func TestUnlockCodeFromTheLogLetsTheOwnerIn(t *testing.T) {
	h := newHarness(t)
	for range 10 {
		postLogin(t, http.DefaultClient, h.http.URL, wrongLogin, nil)
	}
	if got := postLogin(t, http.DefaultClient, h.http.URL, rightLogin, nil); got != http.StatusTooManyRequests {
		t.Fatalf("after 10 failures: %d, want 429", got)
	}
	m := regexp.MustCompile(`unlock_code=([0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4})`).FindAllStringSubmatch(h.logs.String(), -1)
	if len(m) == 0 {
		t.Fatalf("the lockout logged no unlock code:\n%s", h.logs)
	}
	code := m[len(m)-1][1]
	withCode := func(password, unlock string) string {
		return `{"password":"` + password + `","unlock":"` + unlock + `"}`
	}
	for range 20 { // wrong codes: refused, and they do not lengthen anything
		if got := postLogin(t, http.DefaultClient, h.http.URL, withCode(testPassword, "AAAA-BBBB-CCCC"), nil); got != http.StatusBadRequest {
			t.Fatalf("a wrong unlock code: %d, want 400", got)
		}
	}
	if got := postLogin(t, http.DefaultClient, h.http.URL, withCode("nope", code), nil); got != http.StatusUnauthorized {
		t.Fatalf("the right code with a wrong password: %d, want 401", got)
	}
	jar, _ := cookiejar.New(nil)
	owner := &http.Client{Jar: jar}
	typed := strings.ToLower(strings.ReplaceAll(code, "-", " ")) // as a person might type it
	if got := postLogin(t, owner, h.http.URL, withCode(testPassword, typed), nil); got != 200 {
		t.Fatalf("the owner with the unlock code: %d, want 200", got)
	}
	if got := postLogin(t, http.DefaultClient, h.http.URL, withCode(testPassword, code), nil); got != http.StatusBadRequest {
		t.Fatalf("the same code a second time: %d, want 400 (it works once)", got)
	}
	// The owner's browser is now a known device: it logs in past the address's lock.
	if got := postLogin(t, owner, h.http.URL, rightLogin, nil); got != 200 {
		t.Fatalf("the owner's browser after unlocking: %d, want 200", got)
	}
}

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

package server

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// Reveal is a call of the table, so it is also served at POST /api/rpc/RevealLogin: that door
// must ask for the server's login password as the REST route does, share its lockout, and say
// when to try again (in the body the UI reads and in Retry-After), or a stolen access token could read saved passwords through it.
func TestRevealThroughTheCallRouteAsksForThePasswordAndSaysWhenToRetry(t *testing.T) {
	h := newHarness(t)
	tok := h.login(t).AccessToken
	const secret = "correct-horse-unlikely-7"
	resp, body := h.do(t, "POST", "/api/rpc/SaveLogin", tok, `{"id":"","input":{"origin":"https://a.example","username":"ada","password":"`+secret+`"}}`)
	if resp.StatusCode != 200 {
		t.Fatalf("add: %d %s", resp.StatusCode, body)
	}
	id := between(body, `"id":"`, `"`)
	if resp, body := h.do(t, "POST", "/api/rpc/RevealLogin", tok, `{"id":"`+id+`"}`); resp.StatusCode != 400 || strings.Contains(body, secret) || !strings.Contains(body, `"field":"password"`) {
		t.Errorf("reveal without the server password: %d %s", resp.StatusCode, body)
	}
	if resp, body := h.do(t, "POST", "/api/rpc/RevealLogin", tok, `{"id":"`+id+`","password":"`+testPassword+`"}`); resp.StatusCode != 200 || !strings.Contains(body, secret) {
		t.Errorf("reveal: %d %s", resp.StatusCode, body)
	}
	for range 4 {
		h.do(t, "POST", "/api/rpc/RevealLogin", tok, `{"id":"`+id+`","password":"wrong"}`)
	}
	// Locked out on both doors, counted together, with the wait in the body the UI reads.
	for _, try := range []struct{ path, body string }{
		{"/api/rpc/RevealLogin", `{"id":"` + id + `","password":"` + testPassword + `"}`},
		{"/api/logins/" + id + "/reveal", `{"password":"` + testPassword + `"}`},
	} {
		resp, body := h.do(t, "POST", try.path, tok, try.body)
		var e struct {
			Error      string `json:"error"`
			Field      string `json:"field"`
			RetryAfter int    `json:"retryAfter"`
		}
		json.Unmarshal([]byte(body), &e)
		if resp.StatusCode != 429 || strings.Contains(body, secret) || e.Field != "password" || e.RetryAfter < 1 || !strings.Contains(e.Error, "try again in") ||
			resp.Header.Get("Retry-After") != strconv.Itoa(e.RetryAfter) {
			t.Errorf("%s after repeated wrong passwords: %d %s, want 429 with retryAfter", try.path, resp.StatusCode, body)
		}
	}
}

package server

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/store"
)

// Saved logins over HTTP: bad input names its field and stores nothing; the list never carries
// the password; Reveal wants the server's login password again, refuses a wrong one (and
// locks out after a few), and only then returns it; the database file never holds it.
func TestSavedLoginsOverHTTPRevealAsksForThePassword(t *testing.T) {
	h, tok := newLoggedIn(t)
	const secret = "Tr0ub4dor-unlikely-Q9"
	for body, field := range map[string]string{
		`{"origin":"ftp://files.example","username":"ada","password":"x"}`: "origin",
		`{"origin":"https://a.example","username":" ","password":"x"}`:     "username",
		`{"origin":"https://a.example","username":"ada"}`:                  "password",
	} {
		resp, got := h.do(t, "POST", "/api/logins", tok, body)
		if resp.StatusCode != 400 || !strings.Contains(got, `"field":"`+field+`"`) {
			t.Errorf("%s: %d %s, want 400 naming %s", body, resp.StatusCode, got, field)
		}
	}
	resp, body := h.do(t, "POST", "/api/logins", tok, `{"origin":"A.example:443/login","username":"ada","password":"`+secret+`"}`)
	if resp.StatusCode != http.StatusCreated || !strings.Contains(body, `"origin":"https://a.example"`) || strings.Contains(body, secret) {
		t.Fatalf("add: %d %s", resp.StatusCode, body)
	}
	id := between(body, `"id":"`, `"`)
	if resp, body := h.do(t, "GET", "/api/logins", tok, ""); resp.StatusCode != 200 || strings.Contains(body, secret) || !strings.Contains(body, `"passwordSet":true`) {
		t.Fatalf("list: %d %s", resp.StatusCode, body)
	}
	// An edit without a password keeps it.
	if resp, body := h.do(t, "PUT", "/api/logins/"+id, tok, `{"origin":"https://a.example","username":"ada2"}`); resp.StatusCode != 200 || !strings.Contains(body, `"username":"ada2"`) {
		t.Fatalf("edit: %d %s", resp.StatusCode, body)
	}
	if resp, body := h.do(t, "POST", "/api/logins/"+id+"/reveal", tok, `{}`); resp.StatusCode != 400 || !strings.Contains(body, `"field":"password"`) {
		t.Errorf("reveal without the server password: %d %s", resp.StatusCode, body)
	}
	if resp, body := h.do(t, "POST", "/api/logins/"+id+"/reveal", tok, `{"password":"wrong"}`); resp.StatusCode != 403 || strings.Contains(body, secret) {
		t.Errorf("reveal with a wrong password: %d %s", resp.StatusCode, body)
	}
	if resp, body := h.do(t, "POST", "/api/logins/"+id+"/reveal", tok, `{"password":"`+testPassword+`"}`); resp.StatusCode != 200 || !strings.Contains(body, secret) {
		t.Errorf("reveal: %d %s", resp.StatusCode, body)
	}
	for range 3 {
		h.do(t, "POST", "/api/logins/"+id+"/reveal", tok, `{"password":"wrong"}`)
	}
	if resp, body := h.do(t, "POST", "/api/logins/"+id+"/reveal", tok, `{"password":"`+testPassword+`"}`); resp.StatusCode != 429 || strings.Contains(body, secret) {
		t.Errorf("reveal after repeated wrong passwords must be locked: %d %s", resp.StatusCode, body)
	}
	for _, f := range []string{store.FileName, store.FileName + "-wal"} {
		if b, _ := os.ReadFile(filepath.Join(h.dataDir, f)); strings.Contains(string(b), secret) {
			t.Errorf("%s holds the password in plain text", f)
		}
	}
	if resp, _ := h.do(t, "DELETE", "/api/logins/"+id, tok, ""); resp.StatusCode != 204 {
		t.Errorf("delete: %d", resp.StatusCode)
	}
	if resp, body := h.do(t, "POST", "/api/logins/"+id+"/reveal", tok, `{"password":"`+testPassword+`"}`); resp.StatusCode == 200 {
		t.Errorf("reveal after delete: %d %s", resp.StatusCode, body)
	}
}

// Recipes over HTTP: a bad step is refused naming the step and field; a saved one lists with its params.
func TestRecipesOverHTTPNameTheStep(t *testing.T) {
	h, tok := newLoggedIn(t)
	resp, body := h.do(t, "POST", "/api/recipes", tok, `{"name":"r","description":"","steps":[{"tool":"write_to_terminal","args":{}}]}`)
	if resp.StatusCode != 400 || !strings.Contains(body, `"field":"steps[0].tool"`) || !strings.Contains(body, "not a browser tool") {
		t.Fatalf("a non-browser step: %d %s", resp.StatusCode, body)
	}
	if resp, body := h.do(t, "POST", "/api/recipes/none/run", tok, `{"paneId":"p"}`); resp.StatusCode != 404 {
		t.Errorf("run of an unknown recipe: %d %s", resp.StatusCode, body)
	}
}

func between(s, a, b string) string {
	_, rest, _ := strings.Cut(s, a)
	v, _, _ := strings.Cut(rest, b)
	return v
}

// Reveal is a call of the table, so it is also served at POST /api/rpc/RevealLogin: that door
// must ask for the server's login password as the REST route does, share its lockout, and say
// when to try again (in the body the UI reads and in Retry-After), or a stolen access token could read saved passwords through it.
func TestRevealThroughTheCallRouteAsksForThePasswordAndSaysWhenToRetry(t *testing.T) {
	h, tok := newLoggedIn(t)
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

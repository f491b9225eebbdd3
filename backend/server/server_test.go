package server

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/coder/websocket"
	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/crypto/bcrypt"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/api"
	"github.com/clusterspace/clusterspace/backend/browser"
	"github.com/clusterspace/clusterspace/backend/catalog"
	"github.com/clusterspace/clusterspace/backend/chat"
	"github.com/clusterspace/clusterspace/backend/config"
	"github.com/clusterspace/clusterspace/backend/fleet"
	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/internal/syncbuf"
	"github.com/clusterspace/clusterspace/backend/logins"
	"github.com/clusterspace/clusterspace/backend/panes"
	"github.com/clusterspace/clusterspace/backend/pubsub"
	"github.com/clusterspace/clusterspace/backend/recipes"
	"github.com/clusterspace/clusterspace/backend/secrets"
	"github.com/clusterspace/clusterspace/backend/store"
	"github.com/clusterspace/clusterspace/backend/terminal"
	"github.com/clusterspace/clusterspace/backend/terminal/terminaltest"
	"github.com/clusterspace/clusterspace/backend/tools"
	"github.com/clusterspace/clusterspace/backend/workspace"
)

const testPassword = "correct horse battery staple"

type harness struct {
	srv       *Server
	http      *httptest.Server
	auth      *Auth
	ws        *workspace.Service
	providers *config.Providers
	browsers  *browser.Manager
	fleets    *fleet.Service
	logs      *syncbuf.Buffer // the server's log output, for assertions
	dataDir   string
}

func TestMain(m *testing.M) {
	// Login checks are not what these tests measure; the production cost under -race would
	// make them take minutes. TestPasswordSetupAndChange checks real hashes are bcrypt.
	bcryptCost = bcrypt.MinCost
	cleanup := terminaltest.IsolateHome()
	code := m.Run()
	cleanup()
	os.Exit(code)
}

// noModels has no providers: the server tests exercise routes, not goals that run.
type noModels struct{}

func (noModels) Model(context.Context, string) (agent.Model, error) {
	return agent.Model{}, errors.New("no provider is configured: add one in Settings → Providers")
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	dir := t.TempDir()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(dir, store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	pwFile := filepath.Join(dir, "pw")
	os.WriteFile(pwFile, []byte(testPassword+"\n"), 0o600)
	auth, generated, err := SetupAuth(ctx, dir, st, pwFile)
	if err != nil || generated != "" {
		t.Fatalf("auth: %v (generated %q)", err, generated)
	}
	broker := pubsub.NewBroker[workspace.List]()
	t.Cleanup(broker.Shutdown)
	wsvc, err := workspace.NewService(ctx, st, broker)
	if err != nil {
		t.Fatal(err)
	}
	vault, err := secrets.Open(ctx, dir, st, secrets.Options{NoKeyring: true})
	if err != nil {
		t.Fatal(err)
	}
	provBroker := pubsub.NewBroker[config.ProviderList]()
	t.Cleanup(provBroker.Shutdown)
	providers := config.NewProviders(st, vault, provBroker, nil)
	terms := terminal.NewManager(terminal.Options{})
	t.Cleanup(terms.Shutdown)
	browsers := browser.NewManager(browser.Options{DataDir: dir})
	t.Cleanup(browsers.Shutdown)
	sshBroker := pubsub.NewBroker[[]config.SSHServer]()
	t.Cleanup(sshBroker.Shutdown)
	reg := tools.NewRegistry()
	reg.Register(tools.GoalTools()...)
	goalEvents := pubsub.NewBroker[goal.Event]()
	t.Cleanup(goalEvents.Shutdown)
	goals, err := goal.NewService(ctx, st, noModels{}, reg, goalEvents, goal.Options{
		PaneExists: func(id string) bool { return wsvc.HasPane(ctx, id) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(goals.Shutdown)
	chatEvents := pubsub.NewBroker[chat.Event]()
	t.Cleanup(chatEvents.Shutdown)
	chatSvc := chat.NewService(st, noModels{}, reg, chatEvents, chat.Options{})
	t.Cleanup(chatSvc.Shutdown)
	fleetEvents := pubsub.NewBroker[fleet.Event]()
	t.Cleanup(fleetEvents.Shutdown)
	fleets, err := fleet.NewService(ctx, st, goals, fleetEvents, fleet.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fleets.Shutdown)
	cat, err := catalog.Open(ctx, filepath.Join(dir, "config"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close() })
	frontend := fstest.MapFS{
		"index.html":        {Data: []byte("<!doctype html><div id=app></div>")},
		"assets/app-abc.js": {Data: []byte("console.log(1)")},
	}
	logs := &syncbuf.Buffer{}
	srv, err := New(Config{Addr: "127.0.0.1:0", Frontend: frontend, Version: "test", Logger: slog.New(slog.NewTextHandler(logs, nil))},
		Deps{Auth: auth, Services: api.Services{Workspaces: wsvc, Providers: providers, Terminals: terms, Browsers: browsers, Panes: panes.New(wsvc, terms, browsers), Goals: goals, Chat: chatSvc, Fleets: fleets, Settings: st, Catalog: cat, SSH: config.NewSSHServers(st, vault, sshBroker),
			Recipes: recipes.NewService(st, reg, browsers), Logins: logins.NewService(st, vault)},
			Events: []pubsub.Source{pubsub.From(broker, "workspaces"), pubsub.From(provBroker, "providers")}})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { srv.Close(); hs.Close() })
	return &harness{srv: srv, http: hs, auth: auth, ws: wsvc, providers: providers, browsers: browsers, fleets: fleets, logs: logs, dataDir: dir}
}

func (h *harness) do(t *testing.T, method, path, token, body string) (*http.Response, string) {
	t.Helper()
	contentType := ""
	if body != "" {
		contentType = "application/json"
	}
	resp, b := send(t, h.http.URL, method, path, contentType, token, body)
	return resp, string(b)
}

// send makes one request to base+path, with the content type and the bearer token when they
// are not empty, and returns the answer with its body read.
func send(t *testing.T, base, method, path, contentType, token, body string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func (h *harness) login(t *testing.T) Tokens {
	t.Helper()
	resp, body := h.do(t, "POST", "/api/login", "", `{"password":"`+testPassword+`"}`)
	if resp.StatusCode != 200 {
		t.Fatalf("login: %d %s", resp.StatusCode, body)
	}
	var tok Tokens
	json.Unmarshal([]byte(body), &tok)
	return tok
}

// newLoggedIn is a harness and an access token of a fresh login to it: the start of most
// route tests.
func newLoggedIn(t *testing.T) (*harness, string) {
	t.Helper()
	h := newHarness(t)
	return h, h.login(t).AccessToken
}

// badTokens are tokens the server must refuse, each for a different reason.
func (h *harness) badTokens(t *testing.T, good Tokens) map[string]string {
	t.Helper()
	// Expired: signed by the real key, with a clock an hour behind.
	realNow := h.auth.now
	h.auth.now = func() time.Time { return realNow().Add(-AccessTTL - time.Minute) }
	expired, err := h.auth.sign(tokenAccess, "", "", AccessTTL)
	h.auth.now = realNow
	if err != nil {
		t.Fatal(err)
	}
	// Tampered: the payload changed (a different subject), the signature kept.
	parts := strings.Split(good.AccessToken, ".")
	payload, _ := jwt.NewParser().DecodeSegment(parts[1])
	forged := strings.Replace(string(payload), `"owner"`, `"admin"`, 1)
	tampered := parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(forged)) + "." + parts[2]
	// Wrong algorithms: HS512 with the real secret, and "none".
	c := claims{Kind: tokenAccess, PasswordTag: h.auth.passwordTag, RegisteredClaims: jwt.RegisteredClaims{
		Issuer: issuer, ExpiresAt: jwt.NewNumericDate(time.Now().Add(time.Hour))}}
	hs512, _ := jwt.NewWithClaims(jwt.SigningMethodHS512, c).SignedString(h.auth.secret)
	none, _ := jwt.NewWithClaims(jwt.SigningMethodNone, c).SignedString(jwt.UnsafeAllowNoneSignatureType)
	// Right shape, wrong key.
	otherKey, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString([]byte("another install's secret key!!!!"))
	return map[string]string{
		"no token":          "",
		"expired":           expired,
		"tampered":          tampered,
		"HS512":             hs512,
		"alg none":          none,
		"other key":         otherKey,
		"refresh as access": good.RefreshToken,
		"garbage":           "not.a.jwt",
	}
}

var pathParam = regexp.MustCompile(`\{[^}]+\}`)

// TestEveryAPIRouteNeedsAValidToken walks the real route table: a route added later without
// auth fails here unless it is deliberately public.
func TestEveryAPIRouteNeedsAValidToken(t *testing.T) {
	h := newHarness(t)
	good := h.login(t)
	bad := h.badTokens(t, good)
	public := map[string]bool{"POST /api/login": true, "POST /api/refresh": true}
	var checked int
	// The call table's routes (POST /api/rpc/{name} and each call's REST route) too.
	all := h.srv.routes()
	for _, c := range h.srv.calls.HTTP(nil, 1) {
		method, pattern, _ := strings.Cut(c.Pattern, " ")
		all = append(all, route{method: method, pattern: pattern})
	}
	for _, r := range all {
		key := r.method + " " + r.pattern
		if public[key] {
			continue
		}
		path := pathParam.ReplaceAllString(r.pattern, "x")
		for name, tok := range bad {
			resp, body := h.do(t, r.method, path, tok, "{}")
			if resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("%s with %s: status %d, want 401 (%s)", key, name, resp.StatusCode, body)
			}
		}
		// The same request with a good token gets past auth (so the 401s above mean something).
		goodAccess := good.AccessToken
		if key == "POST /api/logout" {
			goodAccess = h.login(t).AccessToken // logging out must not end the session the walk uses
		}
		if resp, body := h.do(t, r.method, path, goodAccess, "{}"); resp.StatusCode == http.StatusUnauthorized {
			t.Errorf("%s with a valid token: 401 (%s)", key, body)
		}
		checked++
	}
	if checked < 10 {
		t.Fatalf("only %d routes checked; the table looks wrong", checked)
	}
	// A route marked public other than login/refresh must be a deliberate choice: the WebSocket
	// checks its own token, and the loop above proved it refuses the bad ones.
	for _, r := range h.srv.routes() {
		key := r.method + " " + r.pattern
		if r.public && !public[key] && key != "GET /api/ws" {
			t.Errorf("%s is public; add it to this test only if it must be", key)
		}
	}
	// Refresh refuses the bad tokens too, and an access token in place of a refresh one.
	for name, tok := range bad {
		if name == "refresh as access" {
			tok = good.AccessToken
		}
		if resp, _ := h.do(t, "POST", "/api/refresh", "", `{"refreshToken":"`+tok+`"}`); resp.StatusCode != 401 {
			t.Errorf("refresh with %s: %d, want 401", name, resp.StatusCode)
		}
	}
	if resp, body := h.do(t, "POST", "/api/refresh", "", `{"refreshToken":"`+good.RefreshToken+`"}`); resp.StatusCode != 200 || !strings.Contains(body, "accessToken") {
		t.Fatalf("refresh with a good token: %d %s", resp.StatusCode, body)
	}
}

func TestLoginLockoutGrows(t *testing.T) {
	h := newHarness(t)
	clock := time.Now()
	h.srv.lockout.now = func() time.Time { return clock }
	wrong := `{"password":"nope"}`
	right := `{"password":"` + testPassword + `"}`
	fail := func(n int) {
		t.Helper()
		for range n {
			if resp, body := h.do(t, "POST", "/api/login", "", wrong); resp.StatusCode != 401 {
				t.Fatalf("wrong password: %d %s", resp.StatusCode, body)
			}
		}
	}
	expectLocked := func(wantSecs int) {
		t.Helper()
		resp, body := h.do(t, "POST", "/api/login", "", right)
		if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != fmt.Sprint(wantSecs) {
			t.Fatalf("want locked for %d s: %d Retry-After=%q %s", wantSecs, resp.StatusCode, resp.Header.Get("Retry-After"), body)
		}
	}

	fail(2)
	// The failure that starts a lock says so, with how long, so the UI can count down.
	resp, body := h.do(t, "POST", "/api/login", "", wrong)
	if resp.StatusCode != 401 || resp.Header.Get("Retry-After") != "30" || !strings.Contains(body, `"retryAfter":30`) {
		t.Fatalf("third failure: %d Retry-After=%q %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	expectLocked(30) // 3 failures -> 30 s, even with the right password
	clock = clock.Add(29 * time.Second)
	expectLocked(1)
	clock = clock.Add(2 * time.Second) // the 30 s lock is over
	// Each further failure locks again for its tier: 4 -> 30 s, 5..7 -> 5 min, 8+ -> 30 min.
	for _, lock := range []int{30, 300, 300, 300, 1800, 1800} { // failures 4..9
		fail(1)
		expectLocked(lock)
		clock = clock.Add(time.Duration(lock+1) * time.Second)
	}
	h.login(t) // the right password works again and clears the count
	fail(2)
	if resp, _ := h.do(t, "POST", "/api/login", "", right); resp.StatusCode != 200 {
		t.Fatal("two failures after a success locked the client out")
	}
}

func dialWS(ctx context.Context, h *harness, token, origin string) (*websocket.Conn, *http.Response, error) {
	hdr := http.Header{}
	if origin != "" {
		hdr.Set("Origin", origin)
	}
	protocols := []string{wsProtocol}
	if token != "" {
		protocols = append(protocols, wsBearerPrefix+token)
	}
	return websocket.Dial(ctx, "ws"+strings.TrimPrefix(h.http.URL, "http")+"/api/ws",
		&websocket.DialOptions{HTTPHeader: hdr, Subprotocols: protocols})
}

// openWS opens the WebSocket as a logged-in browser does, and a context of timeout to read and
// write it in; both end with the test.
func (h *harness) openWS(t *testing.T, token string, timeout time.Duration) (context.Context, *websocket.Conn) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	conn, _, err := dialWS(ctx, h, token, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.CloseNow() })
	return ctx, conn
}

func TestWebSocketChecksOriginAndStreamsEvents(t *testing.T) {
	h := newHarness(t)
	tok := h.login(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	for _, origin := range []string{"http://evil.example", "null", "http://127.0.0.1.evil.example"} {
		_, resp, err := dialWS(ctx, h, tok.AccessToken, origin)
		if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
			t.Errorf("origin %q: err=%v status=%v, want 403", origin, err, resp)
		}
	}
	if _, resp, err := dialWS(ctx, h, "", h.http.URL); err == nil || resp.StatusCode != 401 {
		t.Fatalf("no token: %v", err)
	}

	conn, resp, err := dialWS(ctx, h, tok.AccessToken, h.http.URL)
	if err != nil {
		t.Fatalf("same-origin dial: %v", err)
	}
	defer conn.CloseNow()
	if conn.Subprotocol() != wsProtocol || resp.Header.Get("Sec-WebSocket-Protocol") != wsProtocol {
		t.Fatalf("negotiated %q; the token must not be echoed back", conn.Subprotocol())
	}
	for h.ws.Events().Subscribers() == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := h.ws.Create(ctx, "From a test"); err != nil {
		t.Fatal(err)
	}
	_, msg, err := conn.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var env struct {
		Topic, Type string
		Data        workspace.List
	}
	json.Unmarshal(msg, &env)
	if env.Topic != "workspaces" || env.Type != workspace.EventCreated || len(env.Data.Workspaces) != 2 {
		t.Fatalf("event %s", msg)
	}
}

func TestWebSocketClosesWhenTokenExpires(t *testing.T) {
	h := newHarness(t)
	realNow := h.auth.now
	// A token that expires two seconds from now.
	h.auth.now = func() time.Time { return realNow().Add(-AccessTTL + 2*time.Second) }
	tok, _ := h.auth.Issue()
	h.auth.now = realNow
	ctx, conn := h.openWS(t, tok.AccessToken, 10*time.Second)
	_, _, err := conn.Read(ctx)
	if websocket.CloseStatus(err) != wsCloseTokenExpired {
		t.Fatalf("read ended with %v, want close %d", err, wsCloseTokenExpired)
	}
}

func TestBadRequestsNameTheField(t *testing.T) {
	h, tok := newLoggedIn(t)
	list, _ := h.ws.List(context.Background())
	id := list.ActiveID
	cases := []struct{ method, path, body, field, text string }{
		{"PUT", "/api/workspaces/" + id + "/grid", `{"rows": 9, "cols": 2}`, "rows", "between 1 and 6"},
		{"PUT", "/api/workspaces/" + id + "/grid", `{"rows": "3", "cols": 2}`, "rows", "should be int"},
		{"PUT", "/api/workspaces/" + id + "/grid", `{"row": 3}`, "row", "unknown field"},
		{"PATCH", "/api/workspaces/" + id, `{"name": ""}`, "name", "must not be empty"},
		{"PUT", "/api/workspaces/" + id + "/grid", ``, "", "body is empty"},
	}
	for _, c := range cases {
		resp, body := h.do(t, c.method, c.path, tok, c.body)
		var e errorBody
		json.Unmarshal([]byte(body), &e)
		if resp.StatusCode != 400 || e.Field != c.field || !strings.Contains(e.Error, c.text) {
			t.Errorf("%s %s %s: %d %s", c.method, c.path, c.body, resp.StatusCode, body)
		}
	}
	if resp, body := h.do(t, "DELETE", "/api/workspaces/"+id, tok, ""); resp.StatusCode != http.StatusConflict {
		t.Errorf("delete last: %d %s", resp.StatusCode, body)
	}
	if resp, _ := h.do(t, "POST", "/api/workspaces/ws-nope/activate", tok, ""); resp.StatusCode != 404 {
		t.Errorf("unknown workspace: %d", resp.StatusCode)
	}
	if resp, _ := h.do(t, "GET", "/api/nothing-here", tok, ""); resp.StatusCode != 404 {
		t.Errorf("unknown API route: %d", resp.StatusCode)
	}
}

func TestStaticServesTheAppWithSecurityHeaders(t *testing.T) {
	h := newHarness(t)
	for _, p := range []string{"/", "/some/client/route"} {
		resp, body := h.do(t, "GET", p, "", "")
		if resp.StatusCode != 200 || !strings.Contains(body, `id=app`) {
			t.Errorf("%s: %d %q", p, resp.StatusCode, body)
		}
		if resp.Header.Get("X-Frame-Options") != "DENY" || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "default-src 'self'") {
			t.Errorf("%s: missing security headers", p)
		}
	}
	if resp, _ := h.do(t, "GET", "/assets/app-abc.js", "", ""); !strings.Contains(resp.Header.Get("Cache-Control"), "immutable") {
		t.Error("hashed asset not cached")
	}
	if resp, _ := h.do(t, "GET", "/missing.js", "", ""); resp.StatusCode != 404 {
		t.Errorf("missing file: %d", resp.StatusCode)
	}
}

func TestCheckAddr(t *testing.T) {
	for addr, remote := range map[string]bool{"127.0.0.1:4444": false, "localhost:1": false, "[::1]:80": false, "0.0.0.0:4444": true, ":4444": true, "192.168.1.5:80": true} {
		got, err := CheckAddr(addr, false)
		if remote && (err == nil || !strings.Contains(err.Error(), "--allow-remote")) {
			t.Errorf("%s without --allow-remote: %v", addr, err)
		}
		if !remote && err != nil {
			t.Errorf("%s: %v", addr, err)
		}
		if got, err = CheckAddr(addr, true); err != nil || got != remote {
			t.Errorf("%s with --allow-remote: remote=%v err=%v", addr, got, err)
		}
	}
	if _, err := CheckAddr("nonsense", false); err == nil {
		t.Error("an address without a port was accepted")
	}
}

func TestPasswordSetupAndChange(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(dir, store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	a, generated, err := SetupAuth(ctx, dir, st, "")
	if err != nil || len(generated) < 20 || !a.CheckPassword(generated) {
		t.Fatalf("first start: %v, generated %q", err, generated)
	}
	hash, _, _ := st.Setting(ctx, passwordHashKey)
	if strings.Contains(hash, generated) || !strings.HasPrefix(hash, "$2") {
		t.Fatal("the password is not stored as a bcrypt hash")
	}
	if info, _ := os.Stat(filepath.Join(dir, secretFile)); info.Mode().Perm() != 0o600 {
		t.Fatalf("JWT secret mode %o", info.Mode().Perm())
	}
	old, _ := a.Issue()
	// Second start: nothing generated, same password.
	if a2, gen2, _ := SetupAuth(ctx, dir, st, ""); gen2 != "" || !a2.CheckPassword(generated) {
		t.Fatal("second start changed the password")
	}
	// A new password from a file replaces it and retires old tokens.
	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte("new-password\n"), 0o600)
	a3, _, err := SetupAuth(ctx, dir, st, pw)
	if err != nil || !a3.CheckPassword("new-password") || a3.CheckPassword(generated) {
		t.Fatalf("password file: %v", err)
	}
	if _, err := a3.parse(old.AccessToken, tokenAccess); err == nil {
		t.Fatal("a token issued under the old password still works")
	}
	os.WriteFile(pw, []byte("\n"), 0o600)
	if _, _, err := SetupAuth(ctx, dir, st, pw); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Fatalf("empty password file: %v", err)
	}
}

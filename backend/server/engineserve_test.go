package server

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/clusterspace/clusterspace/backend/api"
	"github.com/clusterspace/clusterspace/backend/engine"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

// fleetHarness is `serve` over a real engine (SQLite, PTYs, the Goal Runner) whose model is
// the scripted server: the agent in pane "slow-term" waits until aborted, every other claims.
type fleetHarness struct {
	url, token string
}

func newFleetHarness(t *testing.T) *fleetHarness {
	t.Helper()
	model := llmtest.New(t, llmtest.Script{Replies: []llmtest.Reply{{Repeat: 1 << 30, Compute: func(req llmtest.Request) llmtest.Reply {
		if req.Pane() == "slow-term" {
			return llmtest.Calls(llmtest.Call("wait", map[string]int{"ms": 200}))
		}
		return llmtest.Calls(llmtest.Call("claim_complete", map[string]string{"rationale": "done"}))
	}}}})
	return serveOn(t, model)
}

// serveOn is `serve` over a real engine whose model is the scripted server, logged in.
func serveOn(t *testing.T, model *llmtest.Server, opts ...engine.Option) *fleetHarness {
	t.Helper()
	dir := t.TempDir()
	ctx := context.Background()
	base := []engine.Option{engine.WithLogger(slog.New(slog.DiscardHandler)), engine.WithConfigDir(t.TempDir()), engine.WithModel(model.Config())}
	eng, err := engine.Open(ctx, dir, append(base, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte(testPassword+"\n"), 0o600)
	auth, _, err := SetupAuth(ctx, eng.DataDir, eng.Store, pw)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Config{Addr: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler)}, Deps{Auth: auth, Services: api.ForEngine(eng, "test")})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { srv.Close(); hs.Close() })
	h := &fleetHarness{url: hs.URL}
	var tok Tokens
	h.call(t, "POST", "/api/login", "application/json", `{"password":"`+testPassword+`"}`, 200, &tok)
	h.token = tok.AccessToken
	return h
}

// call sends one request and checks its status; out (may be nil) gets the JSON answer.
func (h *fleetHarness) call(t *testing.T, method, path, contentType, body string, want int, out any) string {
	t.Helper()
	res, b := send(t, h.url, method, path, contentType, h.token, body)
	if res.StatusCode != want {
		t.Fatalf("%s %s: %d, want %d: %s", method, path, res.StatusCode, want, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %v: %s", method, path, err, b)
		}
	}
	return string(b)
}

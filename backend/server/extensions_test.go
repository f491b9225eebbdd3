package server

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/api"
	"github.com/clusterspace/clusterspace/backend/mcp"
	"github.com/clusterspace/clusterspace/backend/plugins"
)

// Settings → Plugins and → MCP over HTTP: plugins with their risk, load errors with file and
// line, servers with their state and masked env and header values; the secrets never leave.
func TestExtensionsOverHTTPMaskSecrets(t *testing.T) {
	h := newHarness(t)
	cfg := t.TempDir()
	os.MkdirAll(filepath.Join(cfg, "tools"), 0o755)
	os.WriteFile(filepath.Join(cfg, "tools", "ok.js"), []byte(`module.exports = {description: "fine", risk: "read_only", run() {}};`), 0o644)
	os.WriteFile(filepath.Join(cfg, "tools", "bad.js"), []byte("module.exports = {\n  description: \"x\",\n  run() { return ( },\n};"), 0o644)
	os.WriteFile(filepath.Join(cfg, "mcp.json"), []byte(`{"mcpServers": {
  "gone": {"command": "/nonexistent/mcp-server", "env": {"API_TOKEN": "env-s3cr3t-value"}},
  "web": {"url": "http://127.0.0.1:1/mcp", "headers": {"Authorization": "Bearer hdr-s3cr3t-value"}, "risk": "network_get"}
}}`), 0o600)
	m := mcp.New(cfg, mcp.Options{})
	t.Cleanup(m.Close)
	h.withDeps(t, func(d *Deps) { d.ConfigDir, d.Plugins, d.MCP = cfg, plugins.New(cfg, nil, plugins.Options{}), m })
	tok := h.login(t).AccessToken

	resp, body := h.do(t, "GET", "/api/extensions", tok, "")
	if resp.StatusCode != 200 {
		t.Fatalf("GET: %d %s", resp.StatusCode, body)
	}
	var ext api.Extensions
	if err := json.Unmarshal([]byte(body), &ext); err != nil {
		t.Fatal(err)
	}
	if len(ext.Plugins.Plugins) != 1 || ext.Plugins.Plugins[0].Name != "ok" || ext.Plugins.Plugins[0].Risk.String() != "read_only" {
		t.Errorf("plugins: %+v", ext.Plugins.Plugins)
	}
	if len(ext.Plugins.Errors) != 1 || ext.Plugins.Errors[0].Line != 3 || !strings.HasSuffix(ext.Plugins.Errors[0].File, "bad.js") {
		t.Errorf("errors: %+v", ext.Plugins.Errors)
	}
	if len(ext.MCP.Servers) != 2 || ext.MCP.Servers[0].State != "not_started" {
		t.Errorf("servers before a start: %+v", ext.MCP.Servers)
	}
	resp, body = h.do(t, "POST", "/api/extensions/mcp/start", tok, "")
	if resp.StatusCode != 200 || !strings.Contains(body, `"state":"failed"`) || !strings.Contains(body, `/nonexistent/mcp-server\" not found`) {
		t.Fatalf("start: %d %s", resp.StatusCode, body)
	}
	for _, secret := range []string{"env-s3cr3t-value", "hdr-s3cr3t-value"} {
		if strings.Contains(body, secret) || strings.Contains(h.logs.String(), secret) {
			t.Errorf("%s left the backend: %s", secret, body)
		}
	}
	if !strings.Contains(body, `"API_TOKEN":"••••••"`) || !strings.Contains(body, `"Authorization":"••••••"`) {
		t.Errorf("masked env/headers missing: %s", body)
	}
}

// withDeps serves the harness's requests from a server over changed services: the call table
// takes its services when the server is built, so changing h.srv.deps afterwards reaches only
// the hand-written routes.
func (h *harness) withDeps(t *testing.T, change func(*Deps)) {
	t.Helper()
	deps := h.srv.deps
	change(&deps)
	srv, err := New(h.srv.cfg, deps)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	h.srv = srv
	h.http.Config.Handler = srv.Handler()
}

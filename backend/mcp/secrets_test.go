package mcp

import (
	"maps"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Secrets are every env and header value of the servers loaded (a header's bare token too),
// named by server and key, without the short ones that are flags or ports; a changed
// mcp.json counts from its next load. Nothing is started to learn them.
func TestSecretsAreTheLoadedEnvAndHeaderValues(t *testing.T) {
	cfg := t.TempDir()
	writeConfig(t, cfg, map[string]any{
		"cmd": map[string]any{"command": "/nonexistent/mcp-server", "env": map[string]string{"TOKEN": "env-tok-123456", "DEBUG": "1", "MODE": "quiet"}},
		"web": map[string]any{"url": "http://127.0.0.1:1/mcp", "headers": map[string]string{"Authorization": "Bearer hdr-tok-123456"}},
	})
	m := New(cfg, Options{})
	defer m.Close()
	if got := m.Secrets(); got != nil {
		t.Fatalf("before the first load: %v", got)
	}
	m.Status() // loads mcp.json, starts nothing
	want := map[string]string{
		"env-tok-123456":        "MCP server cmd env TOKEN",
		"Bearer hdr-tok-123456": "MCP server web header Authorization",
		"hdr-tok-123456":        "MCP server web header Authorization",
	}
	if got := m.Secrets(); !maps.Equal(got, want) {
		t.Errorf("secrets: %v, want %v", got, want)
	}
	if st := m.Status(); st.Servers[0].State != "not_started" {
		t.Errorf("a server was started: %+v", st.Servers[0])
	}

	os.Remove(filepath.Join(cfg, FileName))
	time.Sleep(rescanEvery + 100*time.Millisecond)
	m.Status()
	if got := m.Secrets(); len(got) != 0 {
		t.Errorf("after mcp.json went: %v", got)
	}
}

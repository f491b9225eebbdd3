package agentpane

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An agent pane given ClusterSpace's MCP server finds it in its own config: Claude Code in
// .claude.json's mcpServers, Codex CLI in config.toml's mcp_servers, each with the pane's token
// in the server's environment only.
func TestAgentPanesGetClusterSpacesMCPServer(t *testing.T) {
	srv := &MCPServer{Command: "/usr/bin/clusterspace", Args: []string{"mcp", "--data-dir", "/d"}, Env: map[string]string{"CLUSTERSPACE_MCP_TOKEN": "csmcp_x"}}

	claude := filepath.Join(t.TempDir(), "claude")
	s, err := Prepare(template(t, "claude"), Options{Dir: claude, WorkDir: t.TempDir(), Home: t.TempDir(), MCP: srv})
	if err != nil {
		t.Fatal(err)
	}
	servers, _ := readJSON(t, filepath.Join(claude, ".claude.json"))["mcpServers"].(map[string]any)
	cs, _ := servers["clusterspace"].(map[string]any)
	env, _ := cs["env"].(map[string]any)
	if cs["type"] != "stdio" || cs["command"] != "/usr/bin/clusterspace" || env["CLUSTERSPACE_MCP_TOKEN"] != "csmcp_x" {
		t.Fatalf(".claude.json mcpServers: %v", servers)
	}
	if strings.Contains(strings.Join(s.Env, " "), "csmcp_x") || mode(t, filepath.Join(claude, ".claude.json")) != 0o600 {
		t.Fatalf("the token reached the pane's environment (%v) or .claude.json is readable by others", s.Env)
	}

	codex := filepath.Join(t.TempDir(), "codex")
	if _, err := Prepare(template(t, "codex"), Options{Dir: codex, WorkDir: "/w", Home: t.TempDir(), MCP: srv}); err != nil {
		t.Fatal(err)
	}
	cfg, _ := os.ReadFile(filepath.Join(codex, "config.toml"))
	for _, want := range []string{"[mcp_servers.clusterspace]", `command = "/usr/bin/clusterspace"`, `args = ["mcp", "--data-dir", "/d"]`,
		"[mcp_servers.clusterspace.env]", `CLUSTERSPACE_MCP_TOKEN = "csmcp_x"`} {
		if !strings.Contains(string(cfg), want) {
			t.Errorf("config.toml lacks %s:\n%s", want, cfg)
		}
	}

	// Without one, neither config names it.
	bare := filepath.Join(t.TempDir(), "bare")
	if _, err := Prepare(template(t, "claude"), Options{Dir: bare, Home: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	if _, ok := readJSON(t, filepath.Join(bare, ".claude.json"))["mcpServers"]; ok {
		t.Error(".claude.json names an MCP server nobody gave")
	}
}

package mcpserve

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/clusterspace/clusterspace/backend/tools"
)

// TokenEnv is the variable `clusterspace mcp` reads its client's token from when it attaches
// to the running app (read through keyenv, so it never reaches a pane's shell).
const TokenEnv = "CLUSTERSPACE_MCP_TOKEN"

// PaneRisk is the ceiling of the client made for an agent pane: it reads its workspace and
// reports on its task freely; anything that changes something asks the person in the app.
const PaneRisk = tools.ReadOnly

// PaneClient is how an agent in a pane (Claude Code, Codex CLI) reaches this server:
// `clusterspace mcp` over stdio, attached to the running app with a token of its own pane.
type PaneClient struct {
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
}

// ClientConfig makes the MCP client of the agent in pane paneID: a token named pane-PANEID
// (replacing an older one of that pane) with PaneRisk, and the command that uses it. The
// agents' templates write it into the agent's own config (ClaudeJSON, CodexTOML); RevokePane
// ends it with the pane.
func ClientConfig(dataDir, paneID string) (PaneClient, error) {
	exe, err := os.Executable()
	if err != nil {
		return PaneClient{}, fmt.Errorf("find this program to run as the MCP server: %w", err)
	}
	ts := NewTokens(dataDir)
	name := "pane-" + paneID
	if err := ts.Revoke(name); err != nil && !errors.Is(err, ErrNoToken) {
		return PaneClient{}, err
	}
	token, err := ts.Create(name, PaneRisk, paneID)
	if err != nil {
		return PaneClient{}, err
	}
	return PaneClient{Command: exe, Args: []string{"mcp", "--data-dir", dataDir}, Env: map[string]string{TokenEnv: token}}, nil
}

// ClaudeJSON is the client as Claude Code's --mcp-config file (and .mcp.json) holds it.
func (p PaneClient) ClaudeJSON() ([]byte, error) {
	return json.MarshalIndent(map[string]any{"mcpServers": map[string]any{ServerName: map[string]any{
		"type": "stdio", "command": p.Command, "args": p.Args, "env": p.Env}}}, "", "  ")
}

// CodexTOML is the client as Codex CLI's config.toml holds it.
func (p PaneClient) CodexTOML() string {
	var b strings.Builder
	fmt.Fprintf(&b, "[mcp_servers.%s]\ncommand = %s\nargs = [", ServerName, strconv.Quote(p.Command))
	for i, a := range p.Args {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(a))
	}
	b.WriteString("]\n")
	fmt.Fprintf(&b, "[mcp_servers.%s.env]\n", ServerName)
	for k, v := range p.Env {
		fmt.Fprintf(&b, "%s = %s\n", k, strconv.Quote(v))
	}
	return b.String()
}

package agentpane

import (
	"fmt"
	"sort"
	"strings"
)

// mcpName is the name the pane's agent knows ClusterSpace's MCP server by: its tools show as
// mcp__clusterspace__report_progress in Claude Code.
const mcpName = "clusterspace"

// MCPServer is ClusterSpace's own MCP server as the pane's agent starts it (from
// mcpserve.ClientConfig): `clusterspace mcp` attached to the running app, with a token of
// the pane's own in its environment, so the agent can report progress on its task and have
// its browser result verified.
type MCPServer struct {
	Command string
	Args    []string
	Env     map[string]string
}

// claudeMCP adds the server to .claude.json's user-scope MCP servers.
func claudeMCP(o Options, m map[string]any) {
	if o.MCP == nil {
		return
	}
	servers, _ := m["mcpServers"].(map[string]any)
	if servers == nil {
		servers = map[string]any{}
	}
	servers[mcpName] = map[string]any{"type": "stdio", "command": o.MCP.Command, "args": o.MCP.Args, "env": o.MCP.Env}
	m["mcpServers"] = servers
}

// codexMCP adds the server to config.toml's MCP servers.
func codexMCP(o Options, b *strings.Builder) {
	if o.MCP == nil {
		return
	}
	args := make([]string, len(o.MCP.Args))
	for i, a := range o.MCP.Args {
		args[i] = tomlString(a)
	}
	fmt.Fprintf(b, "\n[mcp_servers.%s]\ncommand = %s\nargs = [%s]\n", mcpName, tomlString(o.MCP.Command), strings.Join(args, ", "))
	if len(o.MCP.Env) > 0 {
		keys := make([]string, 0, len(o.MCP.Env))
		for k := range o.MCP.Env {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		fmt.Fprintf(b, "\n[mcp_servers.%s.env]\n", mcpName)
		for _, k := range keys {
			fmt.Fprintf(b, "%s = %s\n", k, tomlString(o.MCP.Env[k]))
		}
	}
}

package api

import (
	"context"

	"github.com/clusterspace/clusterspace/backend/mcp"
	"github.com/clusterspace/clusterspace/backend/plugins"
	"github.com/clusterspace/clusterspace/backend/rpc"
)

// Extensions is what Settings → Plugins and Settings → MCP show: the config dir's plugins
// with their load errors, and mcp.json's servers with env and header values masked.
type Extensions struct {
	ConfigDir string         `json:"configDir"`
	Plugins   plugins.Status `json:"plugins"`
	MCP       mcp.Status     `json:"mcp"`
}

// ExtensionsOf reads the status of the plugins and MCP servers (either may be nil: a door
// without them), starting nothing.
func ExtensionsOf(configDir string, p *plugins.Set, m *mcp.Manager) Extensions {
	out := Extensions{ConfigDir: configDir}
	if p != nil {
		out.Plugins = p.Status()
	}
	if m != nil {
		out.MCP = m.Status()
	}
	return out
}

func addExtensions(t *rpc.Table, s Services) {
	rpc.Add(t, rpc.Method{Name: "Extensions", Route: "GET /api/extensions"}, func(ctx context.Context, _ rpc.None) (Extensions, error) {
		return ExtensionsOf(s.ConfigDir, s.Plugins, s.MCP), nil
	})
	// Starts every MCP server now (failed ones again) and answers with their state.
	rpc.Add(t, rpc.Method{Name: "StartMCPServers", Route: "POST /api/extensions/mcp/start"}, func(ctx context.Context, _ rpc.None) (Extensions, error) {
		if s.MCP != nil {
			s.MCP.Start()
		}
		return ExtensionsOf(s.ConfigDir, s.Plugins, s.MCP), nil
	})
}

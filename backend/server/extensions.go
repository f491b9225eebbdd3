package server

import (
	"net/http"

	"github.com/clusterspace/clusterspace/backend/mcp"
	"github.com/clusterspace/clusterspace/backend/plugins"
)

// Extensions is what Settings → Plugins and Settings → MCP show: the config dir's plugins
// with their load errors, and mcp.json's servers with env and header values masked.
type Extensions struct {
	ConfigDir string         `json:"configDir"`
	Plugins   plugins.Status `json:"plugins"`
	MCP       mcp.Status     `json:"mcp"`
}

func (s *Server) extensionRoutes() []route {
	return []route{
		{"GET", "/api/extensions", false, s.getExtensions},
		{"POST", "/api/extensions/mcp/start", false, s.startMCP},
	}
}

// ExtensionsOf reads the status of the plugins and MCP servers (either may be nil: a door
// without them), starting nothing.
func ExtensionsOf(configDir string, p *plugins.Set, m *mcp.Manager) Extensions {
	out := Extensions{ConfigDir: configDir, Plugins: plugins.Status{Plugins: []plugins.Plugin{}, Errors: []plugins.LoadError{}},
		MCP: mcp.Status{Servers: []mcp.ServerStatus{}}}
	if p != nil {
		out.Plugins = p.Status()
	}
	if m != nil {
		out.MCP = m.Status()
	}
	return out
}

func (s *Server) getExtensions(w http.ResponseWriter, r *http.Request) {
	respond(w, http.StatusOK, ExtensionsOf(s.deps.ConfigDir, s.deps.Plugins, s.deps.MCP), nil)
}

// startMCP starts every MCP server now (failed ones too) and answers with their state.
func (s *Server) startMCP(w http.ResponseWriter, r *http.Request) {
	if s.deps.MCP != nil {
		s.deps.MCP.Start()
	}
	respond(w, http.StatusOK, ExtensionsOf(s.deps.ConfigDir, s.deps.Plugins, s.deps.MCP), nil)
}

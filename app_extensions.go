package main

import "github.com/clusterspace/clusterspace/backend/server"

// Extensions returns the config dir's tool plugins (with load errors) and MCP servers (env
// and header values masked), starting nothing.
func (a *App) Extensions() server.Extensions {
	return server.ExtensionsOf(a.eng.ConfigDir, a.eng.Plugins, a.eng.MCP)
}

// StartMCPServers starts every MCP server now (failed ones again) and returns the state.
func (a *App) StartMCPServers() server.Extensions {
	a.eng.MCP.Start()
	return a.Extensions()
}

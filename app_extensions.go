package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/wailsapp/wails/v2/pkg/runtime"

	"github.com/clusterspace/clusterspace/backend/server"
)

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

// OpenExtensionsFolder opens the plugins folder ("plugins": the config dir's tools/) or the
// config dir holding mcp.json ("mcp") in the desktop's file manager, creating it if need be.
// Only those two: the window never names a path to open.
func (a *App) OpenExtensionsFolder(which string) error {
	dir := a.eng.ConfigDir
	switch which {
	case "plugins":
		dir = filepath.Join(dir, "tools")
	case "mcp":
	default:
		return fmt.Errorf("which: %q is neither plugins nor mcp", which)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("cannot create %s (%v): create it yourself or pick another --config-dir", dir, err)
	}
	runtime.BrowserOpenURL(a.ctx, "file://"+dir)
	return nil
}

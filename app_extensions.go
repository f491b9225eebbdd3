package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/wailsapp/wails/v2/pkg/runtime"
)

// The extensions' calls are the table's (backend/api, through App.Call); opening their folders
// in the file manager is the window's own.

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

package main

import (
	"fmt"
	"os"

	"github.com/wailsapp/wails/v2/pkg/runtime"
)

// The fleets' and their agents' calls are the table's (backend/api, through App.Call); the
// window keeps only what needs the desktop.

// SaveFleetFile asks where to save a fleet file (the Composer's Save YAML) and writes it there;
// a cancelled dialog saves nothing and is no error. The webview cannot download a file itself.
func (a *App) SaveFleetFile(name, text string) error {
	path, err := runtime.SaveFileDialog(a.ctx, runtime.SaveDialogOptions{
		Title: "Save fleet", DefaultFilename: name + ".yaml",
		Filters: []runtime.FileFilter{{DisplayName: "Fleet file (*.yaml)", Pattern: "*.yaml;*.yml"}},
	})
	if err != nil || path == "" {
		return err
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		return fmt.Errorf("could not save the fleet to %q: %w", path, err)
	}
	return nil
}

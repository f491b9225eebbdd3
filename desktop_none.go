//go:build !production && !dev

package main

import (
	"errors"
	"io/fs"

	"github.com/clusterspace/clusterspace/backend/engine"
)

// desktopBuilt is false: built without the Wails tags, Wails would print an error and exit 0,
// so this binary refuses the desktop with a message and a failing exit status instead.
const desktopBuilt = false

func runDesktop(*engine.Engine, fs.FS) error {
	return errors.New("this binary was built without the desktop window (the Wails build tags): " +
		"build it with `make build`, or run `clusterspace serve` for the browser UI")
}

//go:build production || dev

package main

import (
	_ "embed"
	"io/fs"

	"github.com/wailsapp/wails/v2"
	"github.com/wailsapp/wails/v2/pkg/options"
	"github.com/wailsapp/wails/v2/pkg/options/assetserver"
	"github.com/wailsapp/wails/v2/pkg/options/linux"

	"github.com/clusterspace/clusterspace/backend/engine"
)

//go:embed build/appicon.png
var appIcon []byte

// desktopBuilt says this binary was built with the Wails tags and can open a window.
const desktopBuilt = true

// Window defaults: big enough for a 2 x 2 grid of 80-column terminals on a laptop screen.
const (
	windowWidth     = 1400
	windowHeight    = 900
	windowMinWidth  = 800
	windowMinHeight = 500
)

func runDesktop(eng *engine.Engine, frontend fs.FS) error {
	gpu := hasRenderNode()
	if name := setWebkitEnv(gpu); name != "" {
		eng.Terminals.HideEnv(name) // the window's setting, not the person's: shells do not inherit it
	}
	app := NewApp(eng)
	app.softwareGraphics = !gpu
	return wails.Run(&options.App{
		Title:            "ClusterSpace",
		Width:            windowWidth,
		Height:           windowHeight,
		MinWidth:         windowMinWidth,
		MinHeight:        windowMinHeight,
		AssetServer:      &assetserver.Options{Assets: frontend},
		BackgroundColour: &options.RGBA{R: 0x16, G: 0x18, B: 0x1d, A: 0xff},
		OnStartup:        app.startup,
		OnDomReady:       app.domReady,
		OnShutdown:       app.shutdown,
		Bind:             []any{app},
		Linux:            &linux.Options{Icon: appIcon, ProgramName: "clusterspace"},
	})
}

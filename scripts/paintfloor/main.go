// Command paintfloor is the floor ClusterSpace's first paint is measured against: a Wails v2
// window built with the same tags, size, background and WebKit setting as ClusterSpace's, whose
// page is one static index.html. It reports its first paint the same way ClusterSpace's window
// does (see app_startup.go and frontend/src/lib/startup/marks.ts), so BenchmarkDesktopPaintFloor
// can launch both alternately and compare: what ClusterSpace takes beyond this is its own.
//
// Build: go build -tags desktop,production,webkit2_41 -ldflags "-w -s" -o build/bin/paintfloor ./scripts/paintfloor
package main

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/wailsapp/wails/v2"
	"github.com/wailsapp/wails/v2/pkg/options"
	"github.com/wailsapp/wails/v2/pkg/options/assetserver"
)

//go:embed index.html
var assets embed.FS

// startupLogPrefix is ClusterSpace's (app_startup.go): the benchmark reads both apps' marks
// with one parser.
const startupLogPrefix = "clusterspace startup marks: "

// App is bound into the page as window.go.main.App, the same name ClusterSpace's window calls.
type App struct {
	mu    sync.Mutex
	marks map[string]float64
}

func (a *App) mark(name string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.marks[name]; !ok {
		a.marks[name] = float64(time.Now().UnixMilli())
	}
}

// ReportStartup logs the page's marks with the Go side's, as ClusterSpace's ReportStartup does.
func (a *App) ReportStartup(marks map[string]float64) {
	a.mu.Lock()
	for k, v := range a.marks {
		marks["go-"+k] = v
	}
	a.mu.Unlock()
	if b, err := json.Marshal(marks); err == nil {
		fmt.Fprintf(os.Stderr, "%s%s\n", startupLogPrefix, b)
	}
}

func main() {
	app := &App{marks: map[string]float64{}}
	app.mark("main")
	// ClusterSpace turns WebKit's DMA-BUF renderer off on a machine without a GPU render node
	// (webkit_env.go); the floor does the same, so the two windows differ only in their pages.
	if nodes, _ := filepath.Glob("/dev/dri/renderD*"); len(nodes) == 0 {
		if _, set := os.LookupEnv("WEBKIT_DISABLE_DMABUF_RENDERER"); !set {
			os.Setenv("WEBKIT_DISABLE_DMABUF_RENDERER", "1")
		}
	}
	err := wails.Run(&options.App{
		Title:            "ClusterSpace paint floor",
		Width:            1400,
		Height:           900,
		AssetServer:      &assetserver.Options{Assets: assets},
		BackgroundColour: &options.RGBA{R: 0x16, G: 0x18, B: 0x1d, A: 0xff},
		OnStartup:        func(context.Context) { app.mark("window-startup") },
		OnDomReady:       func(context.Context) { app.mark("dom-ready") },
		Bind:             []any{app},
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "paintfloor: %v\n", err)
		os.Exit(1)
	}
}

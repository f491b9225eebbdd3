package main

import (
	"path/filepath"
	"testing"
	"time"
)

// minPagePixels is how much of a white page the browser pane must show: the dark UI draws no
// pure white, and a pane of the 2×2 grid is about 650×380 pixels.
const minPagePixels = 60_000

// TestDesktopBrowserPaneSmoke makes a pane a browser pane (through `serve`'s API, on the same
// data dir), then opens the desktop window on it under Xvfb: the window's UI must start the
// pane's Chromium through the Wails bindings and draw its screencast, a white page, on the
// canvas.
func TestDesktopBrowserPaneSmoke(t *testing.T) {
	dataDir := t.TempDir()
	srv := startServe(t, dataDir, e2ePassword)
	makeBrowserPane(t, srv)
	srv.Stop(t)

	d := startDesktopWith(t, dataDir, 3)
	shotPath := filepath.Join(artifactDir(t), "desktop-browser-pane.png")
	deadline := time.Now().Add(30 * time.Second)
	for {
		img := d.screenshot(t, shotPath)
		browsers, white := childProcesses(d.cmd.Process.Pid, "chromium"), countColour(img, [3]uint32{255, 255, 255})
		if browsers > 0 && white >= minPagePixels {
			t.Logf("browser pane screenshot: %s (%d white pixels of the page)", shotPath, white)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the browser pane did not show its page in 30 s (%d Chromium children, %d white pixels; see %s)\napp output:\n%s",
				browsers, white, shotPath, d.out.String())
		}
		time.Sleep(300 * time.Millisecond)
	}
}

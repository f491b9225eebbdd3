package main

import (
	"os"
	"path/filepath"
)

// dmabufEnv turns WebKitGTK's DMA-BUF renderer off.
const dmabufEnv = "WEBKIT_DISABLE_DMABUF_RENDERER"

// webkitEnvFor says which variable the desktop window's WebKit needs on this machine, if any.
// With no GPU render node, WebKit's DMA-BUF renderer hands each frame of the window over
// through software-drawn buffers, and its frames hold up the window's main loop: under Xvfb a
// key's echo took p99 40-270 ms with it and 11-16 ms without (BenchmarkDesktopKeystrokeEcho,
// 2026-11-26). A machine with a GPU keeps WebKit's default, and a person who set the variable
// keeps their choice.
func webkitEnvFor(lookup func(string) (string, bool), gpu bool) (name, value string, ok bool) {
	if _, set := lookup(dmabufEnv); set || gpu {
		return "", "", false
	}
	return dmabufEnv, "1", true
}

// setWebkitEnv applies webkitEnvFor before WebKit starts and returns the variable it set, so
// the terminals can be kept from inheriting it ("" if none).
func setWebkitEnv(gpu bool) string {
	name, value, ok := webkitEnvFor(os.LookupEnv, gpu)
	if !ok {
		return ""
	}
	os.Setenv(name, value)
	return name
}

// hasRenderNode says the machine has a GPU the window can draw with (a DRM render node).
func hasRenderNode() bool {
	nodes, _ := filepath.Glob("/dev/dri/renderD*")
	return len(nodes) > 0
}

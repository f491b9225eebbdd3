package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"
)

// goMarks are the Go side's startup marks (wall-clock Unix milliseconds), logged with the
// window's own by ReportStartup: when main began, when the engine was open, when Wails called
// startup (the window exists) and when the page's DOM was ready.
var goMarks = struct {
	sync.Mutex
	m map[string]float64
}{m: map[string]float64{}}

// markGo records the first time the Go side reached name.
func markGo(name string) {
	goMarks.Lock()
	defer goMarks.Unlock()
	if _, ok := goMarks.m[name]; !ok {
		goMarks.m[name] = float64(time.Now().UnixMilli())
	}
}

// startupLogPrefix begins the line ReportStartup writes; the first-paint benchmark and the
// desktop start test look for it in the app's output.
const startupLogPrefix = "clusterspace startup marks: "

// ReportStartup is called once by the window after it first drew the restored workspace. The
// marks are wall-clock Unix milliseconds taken in the webview (when the script began, when the
// workspace list arrived, when it was drawn, and whether the loading or Retry screen showed),
// so something outside the process can compare them with when it launched the app. The
// webview's console goes nowhere, hence the log line.
func (a *App) ReportStartup(marks map[string]float64) {
	goMarks.Lock()
	for k, v := range goMarks.m {
		marks["go-"+k] = v
	}
	goMarks.Unlock()
	logJSON(startupLogPrefix, marks)
}

// logJSON writes prefix and v as JSON on one line of stderr, where the tests and benchmarks
// that read the app's output find it. Best effort: only they read it.
func logJSON(prefix string, v any) {
	if b, err := json.Marshal(v); err == nil {
		fmt.Fprintf(os.Stderr, "%s%s\n", prefix, b)
	}
}

// ReportProblem logs an uncaught error or unhandled rejection from the window's script: the
// webview's console goes nowhere, and without this a part of the window that failed to come
// up would leave no trace. The window truncates and rate-limits what it sends.
func (a *App) ReportProblem(message string) {
	fmt.Fprintf(os.Stderr, "clusterspace window error: %s\n", message)
}

// echoProbeEnv, set to a number of keys, makes the window time that many typed keys' echo in
// the terminal and log the samples (BenchmarkDesktopKeystrokeEcho); unset, nothing is timed.
const echoProbeEnv = "CLUSTERSPACE_ECHO_PROBE"

// echoLogPrefix begins the line ReportEcho writes.
const echoLogPrefix = "clusterspace echo ms: "

// EchoProbeKeys is how many keys the window's echo probe should time (0: none).
func (a *App) EchoProbeKeys() int {
	n, err := strconv.Atoi(os.Getenv(echoProbeEnv))
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// ReportEcho logs the echo probe's samples (milliseconds from a key going down to its echo in
// the terminal's buffer) for the benchmark that reads the app's output.
func (a *App) ReportEcho(samples []float64) { logJSON(echoLogPrefix, samples) }

// SoftwareGraphics says the machine has no GPU render node, so the window's WebGL is drawn in
// software: the terminals then use xterm's DOM renderer, the faster one there. (WebKitGTK names
// every WebGL renderer "Apple GPU", so the page cannot tell by itself.)
func (a *App) SoftwareGraphics() bool { return a.softwareGraphics }

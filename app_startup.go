package main

import (
	"encoding/json"
	"fmt"
	"os"
)

// startupLogPrefix begins the line ReportStartup writes; the first-paint benchmark and the
// desktop start test look for it in the app's output.
const startupLogPrefix = "clusterspace startup marks: "

// ReportStartup is called once by the window after it first drew the restored workspace. The
// marks are wall-clock Unix milliseconds taken in the webview (when the script began, when the
// workspace list arrived, when it was drawn, and whether the loading or Retry screen showed),
// so something outside the process can compare them with when it launched the app. The
// webview's console goes nowhere, hence the log line.
func (a *App) ReportStartup(marks map[string]float64) {
	b, err := json.Marshal(marks)
	if err != nil {
		return // Best effort: the marks are only for tests and benchmarks.
	}
	fmt.Fprintf(os.Stderr, "%s%s\n", startupLogPrefix, b)
}

// ReportProblem logs an uncaught error or unhandled rejection from the window's script: the
// webview's console goes nowhere, and without this a part of the window that failed to come
// up would leave no trace. The window truncates and rate-limits what it sends.
func (a *App) ReportProblem(message string) {
	fmt.Fprintf(os.Stderr, "clusterspace window error: %s\n", message)
}

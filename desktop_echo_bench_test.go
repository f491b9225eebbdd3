package main

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkDesktopKeystrokeEcho types echoKeys keys, 40 ms apart, into the first terminal of the
// desktop window under Xvfb (xdotool, as a keyboard would) and reports the time from each key
// going down in the webview to its echo in xterm's buffer, as measured by the window's own
// probe (frontend/src/features/terminal/echoprobe.ts, on with CLUSTERSPACE_ECHO_PROBE).
// Target: p50 ≤ 5 ms, p99 ≤ 10 ms, as for the served UI (BenchmarkServedKeystrokeEcho).
func BenchmarkDesktopKeystrokeEcho(b *testing.B) {
	var p50s, p90s, p99s []float64
	for range b.N {
		d := startDesktopEnv(b, b.TempDir(), 4, fmt.Sprintf("%s=%d", echoProbeEnv, echoKeys))
		samples := desktopEcho(b, d)
		b.Logf("%d of %d keys timed", len(samples), echoKeys)
		slices.Sort(samples)
		p50s, p90s, p99s = append(p50s, percentile(samples, 50)), append(p90s, percentile(samples, 90)), append(p99s, percentile(samples, 99))
		d.cmd.Process.Kill()
	}
	slices.Sort(p50s)
	slices.Sort(p90s)
	slices.Sort(p99s)
	b.ReportMetric(percentile(p50s, 50), "p50-ms")
	b.ReportMetric(percentile(p90s, 50), "p90-ms")
	b.ReportMetric(percentile(p99s, 50), "p99-ms")
	b.ReportMetric(0, "ns/op")
}

// desktopEcho clicks into the top-left terminal pane, types the keys and returns the probe's
// samples from the app's log.
func desktopEcho(b *testing.B, d *desktopApp) []float64 {
	b.Helper()
	xdo := func(args ...string) string {
		cmd := exec.Command("xdotool", args...)
		cmd.Env = d.env
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("xdotool %v: %v: %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	win := strings.Fields(xdo("search", "--onlyvisible", "--name", "^ClusterSpace$"))
	if len(win) == 0 {
		b.Fatal("no ClusterSpace window")
	}
	time.Sleep(time.Second) // the shells' prompts
	// The top-left pane's screen: below the tab bar and the pane header, left of the middle.
	xdo("mousemove", "--window", win[0], "200", "200", "click", "1")
	time.Sleep(300 * time.Millisecond)
	xdo("type", "--delay", "40", strings.Repeat("a", echoKeys))
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		for line := range strings.SplitSeq(d.out.String(), "\n") {
			if rest, ok := strings.CutPrefix(line, echoLogPrefix); ok {
				var samples []float64
				if err := json.Unmarshal([]byte(rest), &samples); err != nil {
					b.Fatalf("echo samples %q: %v", rest, err)
				}
				return samples
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	shot := filepath.Join(artifactDir(b), "desktop-echo-no-samples.png")
	d.screenshot(b, shot)
	b.Fatalf("the window reported no echo samples in 30 s (did the keys reach a terminal? see %s)\napp output:\n%s", shot, d.out.String())
	return nil
}

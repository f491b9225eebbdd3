package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/procstat"
)

// startupRun is one launch of the desktop binary, timed from the moment it was started.
type startupRun struct {
	// painted is launch → the restored workspace drawn (the paint floor: its page drawn);
	// workspaces is launch → the workspace rendered into the page (its list read and the
	// layout built; ClusterSpace only); script is launch → the bundle evaluated.
	painted, workspaces, script time.Duration
	// cpu is the processor time the app and its WebKit processes had used when its marks
	// arrived: unlike the wall-clock marks, it hardly grows when other work shares the machine.
	cpu      time.Duration
	marks    map[string]float64
	launched time.Time
}

// String lists every mark as time since the launch, in order.
func (r startupRun) String() string {
	type mark struct {
		name string
		at   time.Duration
	}
	var ms []mark
	for name, v := range r.marks {
		ms = append(ms, mark{name, time.UnixMilli(int64(v)).Sub(r.launched)})
	}
	slices.SortFunc(ms, func(a, b mark) int { return cmp.Compare(a.at, b.at) })
	parts := make([]string, len(ms))
	for i, m := range ms {
		parts[i] = fmt.Sprintf("%s %v", m.name, m.at.Round(time.Millisecond))
	}
	return strings.Join(parts, ", ")
}

// launchDesktopTimed starts the desktop binary on dataDir under display, waits for the window
// to report its startup marks (see app_startup.go), ends the app and returns the marks as
// durations since the launch.
func launchDesktopTimed(t testing.TB, bin, display, dataDir string) startupRun {
	t.Helper()
	run := launchTimed(t, display, exec.Command(bin, "--data-dir", dataDir))
	run.workspaces = run.since(t, "workspaces")
	return run
}

// launchTimed starts cmd (a Wails app that logs its startup marks as ClusterSpace's window
// does: the desktop binary or the paint floor, scripts/paintfloor) under display, waits for
// the marks, ends the app and returns them as durations since the launch.
func launchTimed(t testing.TB, display string, cmd *exec.Cmd) startupRun {
	t.Helper()
	cmd.Env = append(os.Environ(), "DISPLAY="+display, "WAYLAND_DISPLAY=")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = io.Discard
	launched := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	defer func() {
		interruptThenKill(cmd.Process, exited, 10*time.Second)
	}()
	lines := make(chan string, 1)
	var out lockedBuffer
	go func() {
		defer close(exited)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			out.Write([]byte(line + "\n"))
			if rest, ok := strings.CutPrefix(line, startupLogPrefix); ok {
				select {
				case lines <- rest:
				default:
				}
			}
		}
		cmd.Wait()
	}()
	var raw string
	var cpu time.Duration
	select {
	case raw = <-lines:
		cpu = treeCPU(cmd.Process.Pid)
	case <-exited:
		t.Fatalf("%s exited before it reported its first paint:\n%s", cmd.Path, out.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("%s reported no first paint in 60 s:\n%s", cmd.Path, out.String())
	}
	run := startupRun{launched: launched, cpu: cpu}
	if err := json.Unmarshal([]byte(raw), &run.marks); err != nil {
		t.Fatalf("startup marks %q: %v", raw, err)
	}
	run.script, run.painted = run.since(t, "script"), run.since(t, "painted")
	return run
}

// since is launch → the mark name; a run without it fails the test.
func (r startupRun) since(t testing.TB, name string) time.Duration {
	t.Helper()
	ms, ok := r.marks[name]
	if !ok {
		t.Fatalf("the startup marks %v lack %q", r.marks, name)
	}
	return time.UnixMilli(int64(ms)).Sub(r.launched)
}

// TestDesktopStartShowsNoRetry launches the desktop window twice on one data dir (the second
// start restores the 2 × 2 workspace the first made) and checks that the workspace was drawn
// without the "Loading workspaces… Retry" screen showing first: Retry is for a failed or very
// slow start, and a normal start must not flash it.
func TestDesktopStartShowsNoRetry(t *testing.T) {
	bin := testBinary(t)
	display := startXvfb(t)
	dataDir := t.TempDir()
	for i := range 2 {
		run := launchDesktopTimed(t, bin, display, dataDir)
		t.Logf("start %d, after launch: %v", i+1, run)
		if _, shown := run.marks["retry-shown"]; shown {
			t.Errorf("start %d showed the Retry button before the workspace (marks %v)", i+1, run.marks)
		}
	}
}

// BenchmarkDesktopFirstPaint measures launch → restored 2 × 2 workspace drawn in the desktop
// window under Xvfb (the shells may still be starting), and its parts: launch → Wails made
// the window (ms-to-window), → WebKit loaded the page's DOM (ms-to-dom), → bundle evaluated
// (ms-to-script), → workspace rendered into the page (ms-to-ready).
func BenchmarkDesktopFirstPaint(b *testing.B) {
	bin := testBinary(b)
	display := startXvfb(b)
	dataDir := b.TempDir()
	launchDesktopTimed(b, bin, display, dataDir) // creates the workspace the next starts restore
	var painted, workspaces, script, window, dom time.Duration
	b.ResetTimer()
	for range b.N {
		run := launchDesktopTimed(b, bin, display, dataDir)
		painted += run.painted
		workspaces += run.workspaces
		script += run.script
		// The Go side's marks: Wails has made the window; WebKit has loaded the page's DOM.
		window += time.UnixMilli(int64(run.marks["go-window-startup"])).Sub(run.launched)
		dom += time.UnixMilli(int64(run.marks["go-dom-ready"])).Sub(run.launched)
		b.Logf("after launch: %v", run)
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(float64(painted.Milliseconds())/n, "ms-to-paint")
	b.ReportMetric(float64(workspaces.Milliseconds())/n, "ms-to-ready")
	b.ReportMetric(float64(script.Milliseconds())/n, "ms-to-script")
	b.ReportMetric(float64(window.Milliseconds())/n, "ms-to-window")
	b.ReportMetric(float64(dom.Milliseconds())/n, "ms-to-dom")
	b.ReportMetric(0, "ns/op")
}

// treeCPU is the processor time (user and system) that process pid, every live process below
// it and the children it has reaped have used so far, read from /proc.
func treeCPU(pid int) time.Duration {
	type proc struct {
		ppid  int
		ticks int64
	}
	procs := map[int]proc{}
	for _, p := range procstat.All() {
		// state ppid … utime stime cutime cstime (fields 14-17 of proc(5)).
		f := p.Fields
		if len(f) < 15 {
			continue
		}
		var ticks int64
		for _, v := range f[11:15] {
			n, _ := strconv.ParseInt(v, 10, 64)
			ticks += n
		}
		procs[p.PID] = proc{p.Parent(), ticks}
	}
	below := map[int]bool{pid: true}
	for grew := true; grew; { // the tree is shallow: the app, WebKit's processes, their helpers
		grew = false
		for id, p := range procs {
			if !below[id] && below[p.ppid] {
				below[id], grew = true, true
			}
		}
	}
	var ticks int64
	for id := range below {
		ticks += procs[id].ticks
	}
	return time.Duration(ticks) * time.Second / 100 // /proc counts in USER_HZ, 100 a second on Linux
}

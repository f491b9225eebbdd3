package main

import (
	"cmp"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// paintFloorTargetMs is how far above the paint floor ClusterSpace's first paint may be: the
// restored 2 × 2 workspace drawn at most this long after a Wails window with one static page.
const paintFloorTargetMs = 150

// paintFloorBinary is the paint floor (scripts/paintfloor): CLUSTERSPACE_FLOOR_BIN if set (`make
// bench` builds build/bin/paintfloor), else built here with the desktop binary's Wails tags.
func paintFloorBinary(t testing.TB) string {
	t.Helper()
	if bin := os.Getenv("CLUSTERSPACE_FLOOR_BIN"); bin != "" {
		if _, err := os.Stat(bin); err != nil {
			t.Fatalf("CLUSTERSPACE_FLOOR_BIN=%s: %v (build it with `make bench`, or unset it to build it here)", bin, err)
		}
		return bin
	}
	bin := filepath.Join(t.TempDir(), "paintfloor")
	build := exec.Command("go", "build", "-tags", "desktop,production,webkit2_41", "-ldflags", "-w -s", "-o", bin, "./scripts/paintfloor")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the paint floor (scripts/paintfloor) failed: %v\n%s", err, out)
	}
	return bin
}

// floorSamples are alternating launches of ClusterSpace (restoring its 2 × 2 workspace) and
// the paint floor on one display: ours[i] and floor[i] ran back to back.
type floorSamples struct {
	ours, floor []startupRun
}

// floorRig is ClusterSpace and the paint floor ready to launch on one virtual display.
type floorRig struct {
	bin, floor, display, dataDir string
}

// newFloorRig builds the floor, starts Xvfb and launches each app once unmeasured: the first
// ClusterSpace start creates the workspace the later ones restore, and both first starts warm
// the page cache with their binaries and libraries.
func newFloorRig(t testing.TB) floorRig {
	t.Helper()
	r := floorRig{bin: testBinary(t), floor: paintFloorBinary(t), display: startXvfb(t), dataDir: t.TempDir()}
	launchDesktopTimed(t, r.bin, r.display, r.dataDir)
	launchTimed(t, r.display, exec.Command(r.floor))
	return r
}

// pair launches ClusterSpace, then the floor, and logs both.
func (r floorRig) pair(t testing.TB, s *floorSamples) {
	t.Helper()
	ours := launchDesktopTimed(t, r.bin, r.display, r.dataDir)
	floor := launchTimed(t, r.display, exec.Command(r.floor))
	s.ours, s.floor = append(s.ours, ours), append(s.floor, floor)
	if testing.Verbose() { // without -v, go test keeps only a benchmark's first 10 log lines
		t.Logf("launch → first paint: ClusterSpace %v (DOM ready %v, CPU %v), floor %v (DOM ready %v, CPU %v)",
			ms(ours.painted), ms(goMark(ours, "dom-ready")), ours.cpu, ms(floor.painted), ms(goMark(floor, "dom-ready")), floor.cpu)
		t.Logf("  ClusterSpace after launch: %v", ours)
		t.Logf("  floor after launch: %v", floor)
	}
}

// goMark is launch → the Go side's mark name ("dom-ready": WebKit loaded the page's DOM).
func goMark(r startupRun, name string) time.Duration {
	v, ok := r.marks["go-"+name]
	if !ok {
		return 0
	}
	return time.UnixMilli(int64(v)).Sub(r.launched)
}

func ms(d time.Duration) time.Duration { return d.Round(time.Millisecond) }

// median of the values f picks from runs, in milliseconds.
func medianMs(runs []startupRun, f func(startupRun) time.Duration) float64 {
	v := make([]time.Duration, len(runs))
	for i, r := range runs {
		v[i] = f(r)
	}
	return medianOf(v)
}

func medianOf(v []time.Duration) float64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	slices.SortFunc(v, cmp.Compare)
	m := v[len(v)/2]
	if len(v)%2 == 0 {
		m = (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return float64(m.Microseconds()) / 1000
}

// overFloor is the median of ours − floor over the back-to-back pairs: pairing cancels most of
// what a loaded machine does to both launches alike.
func (s floorSamples) overFloor() float64 {
	d := make([]time.Duration, len(s.ours))
	for i := range s.ours {
		d[i] = s.ours[i].painted - s.floor[i].painted
	}
	return medianOf(d)
}

func painted(r startupRun) time.Duration { return r.painted }

// spread says the lowest, median and highest of ours, floor and ours − floor.
func (s floorSamples) spread() string {
	span := func(v []time.Duration) string {
		lo, hi := slices.Min(v), slices.Max(v)
		return fmt.Sprintf("%v / %.0fms / %v", ms(lo), medianOf(v), ms(hi))
	}
	var ours, floor, over []time.Duration
	for i := range s.ours {
		ours, floor = append(ours, s.ours[i].painted), append(floor, s.floor[i].painted)
		over = append(over, s.ours[i].painted-s.floor[i].painted)
	}
	return fmt.Sprintf("%d pairs, launch → first paint, lowest / median / highest: ClusterSpace %s, floor %s, ClusterSpace − floor %s",
		len(s.ours), span(ours), span(floor), span(over))
}

// BenchmarkDesktopPaintFloor launches ClusterSpace (restoring its 2 × 2 workspace) and the
// paint floor (scripts/paintfloor: a Wails window with one static index.html, same tags)
// alternately under one Xvfb, one pair per iteration, and reports the medians of launch →
// first paint of each (ours-ms, floor-ms), the median of their difference per pair
// (over-floor-ms; the target is at most paintFloorTargetMs), launch → DOM ready of each
// (ours-dom-ms, floor-dom-ms: what is left after it is the page's own script and drawing) and
// the processor time each had used by its first paint, its WebKit processes included
// (ours-cpu-ms, floor-cpu-ms: on a loaded machine the wall-clock figures grow, these hardly).
func BenchmarkDesktopPaintFloor(b *testing.B) {
	r := newFloorRig(b)
	var s floorSamples
	for b.Loop() {
		r.pair(b, &s)
	}
	b.Log(s.spread())
	if over := s.overFloor(); over > paintFloorTargetMs {
		b.Logf("ClusterSpace drew its workspace %.0f ms after the floor, more than the %d ms it may (by the median pair)", over, paintFloorTargetMs)
	}
	dom := func(r startupRun) time.Duration { return goMark(r, "dom-ready") }
	b.ReportMetric(medianMs(s.ours, painted), "ours-ms")
	b.ReportMetric(medianMs(s.floor, painted), "floor-ms")
	b.ReportMetric(s.overFloor(), "over-floor-ms")
	b.ReportMetric(medianMs(s.ours, dom), "ours-dom-ms")
	b.ReportMetric(medianMs(s.floor, dom), "floor-dom-ms")
	cpu := func(r startupRun) time.Duration { return r.cpu }
	b.ReportMetric(medianMs(s.ours, cpu), "ours-cpu-ms")
	b.ReportMetric(medianMs(s.floor, cpu), "floor-cpu-ms")
	b.ReportMetric(0, "ns/op")
}

package browser_test

import (
	"bytes"
	"context"
	"image/jpeg"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/browser"
)

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// BenchmarkScreenshotForVerification is what a visual verification costs before the model
// is asked: capture the viewport as PNG, save it, and make the JPEG thumbnail. Target: a
// median of 250 ms or less.
func BenchmarkScreenshotForVerification(b *testing.B) {
	m, site, ctx := newPages(b, 0)
	openPage(b, m, ctx, "p", site.Page("/form"))
	var took []time.Duration
	for b.Loop() {
		start := time.Now()
		if _, err := m.SaveScreenshot(ctx, "p", false); err != nil {
			b.Fatal(err)
		}
		took = append(took, time.Since(start))
	}
	b.ReportMetric(ms(median(took)), "median-ms")
}

// BenchmarkScreencast watches an animated page: frames delivered per second to a viewer.
// Target: 25 fps or more. (Chromium's own frame timestamps run a few ms ahead of the Go
// clock, so frame age is measured end to end by BenchmarkScreencastLatency instead.)
func BenchmarkScreencast(b *testing.B) {
	m, site, ctx := newPages(b, 0)
	frames := castPage(b, m, ctx, site.Page("/animated"))
	for range 5 { // the first picture and the cast's warm-up
		<-frames
	}
	n := 0
	start := time.Now()
	for b.Loop() {
		select {
		case <-frames:
			n++
		case <-time.After(5 * time.Second):
			b.Fatal("the screencast stalled")
		}
	}
	b.ReportMetric(float64(n)/time.Since(start).Seconds(), "fps")
}

// BenchmarkScreencastFourPanes casts an animated page in four browser panes of one workspace at
// once, as a 2 × 2 grid of browsers does, and reports the frames per second of the slowest and
// the fastest pane. Target: every pane 25 fps or more on the 2-core machine when it is quiet
// (before per-page focus emulation, three of the four got none; before crowded casts were
// scaled under Chromium's reusable frame buffers, see castBox, 14–19 fps each).
func BenchmarkScreencastFourPanes(b *testing.B) {
	m, site, ctx := newPages(b, 0)
	panes := []string{"p1", "p2", "p3", "p4"}
	for _, p := range panes {
		openPage(b, m, ctx, p, site.Page("/animated"))
		// A pane of a 2 × 2 grid in a 1920 × 1080 window (the UI reports each pane's size).
		if err := m.SetViewport(p, 940, 480); err != nil {
			b.Fatal(err)
		}
	}
	counts := countFrames(b, m, ctx, panes)
	time.Sleep(time.Second) // the first pictures and the casts' warm-up
	lo, hi := -1.0, 0.0
	for b.Loop() {
		before := make([]int64, len(panes))
		for i := range counts {
			before[i] = counts[i].Load()
		}
		const window = 2 * time.Second
		time.Sleep(window)
		for i := range counts {
			fps := float64(counts[i].Load()-before[i]) / window.Seconds()
			if lo < 0 || fps < lo {
				lo = fps
			}
			hi = max(hi, fps)
		}
	}
	b.ReportMetric(lo, "min-fps")
	b.ReportMetric(hi, "max-fps")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkLaunch starts a workspace's browser on a fresh profile and opens its first tab.
// Target: a browser launch of 1.5 s or less.
func BenchmarkLaunch(b *testing.B) {
	var launch, open []time.Duration
	for b.Loop() {
		dir, err := os.MkdirTemp("", "clusterspace-browser-bench-")
		if err != nil {
			b.Fatal(err)
		}
		m := browser.NewManager(browser.Options{DataDir: dir})
		start := time.Now()
		_, err = m.Open(context.Background(), "p", "ws", "")
		open = append(open, time.Since(start))
		if err == nil {
			d, _ := m.Doctor(context.Background(), "p")
			launch = append(launch, d.LaunchTook)
		}
		m.Shutdown()
		os.RemoveAll(dir)
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(ms(median(launch)), "launch-ms")
	b.ReportMetric(ms(median(open)), "first-tab-ms")
}

// BenchmarkScreencastLatency clicks a page that flips its colour on mouse down and waits for
// the first frame showing the new colour: the age of the picture a person sees, measured end
// to end (input, paint, JPEG, delivery) with no clock of Chromium's involved. Target: a
// median frame age of 100 ms or less.
func BenchmarkScreencastLatency(b *testing.B) {
	m, site, ctx := newPages(b, 0)
	frames := castPage(b, m, ctx, site.Page("/paint"))
	bright := func(f browser.Frame) bool {
		img, err := jpeg.Decode(bytes.NewReader(f.Data))
		if err != nil {
			b.Fatal(err)
		}
		r, _, _, _ := img.At(img.Bounds().Dx()/2, img.Bounds().Dy()/2).RGBA()
		return r>>8 > 128
	}
	white := bright(<-frames)
	var took []time.Duration
	for b.Loop() {
		start := time.Now()
		if err := m.Input("p", browser.InputEvent{Type: browser.InputMouseDown, X: 100, Y: 100}); err != nil {
			b.Fatal(err)
		}
		m.Input("p", browser.InputEvent{Type: browser.InputMouseUp, X: 100, Y: 100})
		white = !white
		for {
			select {
			case f := <-frames:
				if bright(f) == white {
					took = append(took, time.Since(start))
					goto next
				}
			case <-time.After(5 * time.Second):
				b.Fatal("no frame showed the click")
			}
		}
	next:
	}
	b.ReportMetric(ms(median(took)), "median-input-to-frame-ms")
}

package main

import (
	"image"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

// completedGreens are the text colours of the "completed" status pill (lib/ui/StatusPill.svelte,
// --text-ok in lib/ui/tones.css) in the dark and the light palette, whichever the desktop picks: nothing
// else in the workspace view draws it, so it tells that the dashboard shows a finished goal.
var completedGreens = [][3]uint32{{0x4c, 0xc3, 0x8a}, {0x14, 0x62, 0x40}}

// countCompleted counts the pixels of either palette's completed colour.
func countCompleted(img image.Image) int {
	n := 0
	for _, c := range completedGreens {
		n += countColour(img, c)
	}
	return n
}

// minBadgePixels is how many pixels of that colour the list row's and the detail's badges
// draw together at the least (their glyphs' cores; edges are blended with the background).
const minBadgePixels = 12

// countColour counts the pixels within a small distance of rgb (text is anti-aliased).
func countColour(img image.Image, rgb [3]uint32) int {
	const tolerance = 6
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if near(r>>8, rgb[0], tolerance) && near(g>>8, rgb[1], tolerance) && near(bl>>8, rgb[2], tolerance) {
				n++
			}
		}
	}
	return n
}

func near(a, b, d uint32) bool { return a+d >= b && b+d >= a }

// TestDesktopGoalDashboardSmoke finishes a goal with the CLI in a data dir, opens the desktop
// app on it under Xvfb, presses Ctrl+Shift+D (real X key events through xdotool), and keeps a
// screenshot of the dashboard showing the finished goal: the dashboard reads the goal through
// the Wails bindings.
func TestDesktopGoalDashboardSmoke(t *testing.T) {
	dataDir, sandbox := t.TempDir(), t.TempDir()
	model := llmtest.New(t, llmtest.Script{Replies: []llmtest.Reply{
		toolCall("write_to_terminal", map[string]string{"pane_id": "term-1", "text": "echo ok > done.txt"}),
		toolCall("claim_complete", map[string]string{"rationale": "done.txt holds ok"}),
	}})
	run := exec.Command(testBinary(t), "goal", "run", "--goal", "Write ok into done.txt", "--check-shell", "grep -q ok done.txt",
		"--base-url", model.OpenAIURL(), "--model", "scripted", "--sandbox", sandbox, "--data-dir", dataDir, "--critic-every", "0")
	run.Dir = sandbox
	if out, err := run.CombinedOutput(); err != nil || !strings.Contains(string(out), "ended     completed") {
		t.Fatalf("the goal did not complete: %v\n%s", err, out)
	}

	d := startDesktop(t, dataDir)
	before := d.screenshot(t, filepath.Join(t.TempDir(), "before.png"))
	if n := countCompleted(before); n >= minBadgePixels {
		t.Fatalf("the workspace view already shows %d pixels of the completed badge's colour: the check would prove nothing", n)
	}

	// Real key events to the focused window: the app's shortcut opens the dashboard.
	key := exec.Command("sh", "-c", `id=$(xdotool search --onlyvisible --name '^ClusterSpace$' | head -1) && xdotool windowfocus --sync "$id" && xdotool key --clearmodifiers ctrl+shift+d`)
	key.Env = d.env
	if out, err := key.CombinedOutput(); err != nil {
		t.Fatalf("xdotool: %v\n%s", err, out)
	}
	shotPath := filepath.Join(artifactDir(t), "desktop-goal-dashboard.png")
	deadline := time.Now().Add(20 * time.Second)
	for {
		img := d.screenshot(t, shotPath)
		n := countCompleted(img)
		if n >= minBadgePixels && distinctColours(img) >= minDistinctColours {
			t.Logf("dashboard screenshot: %s (%d pixels of the completed badge)", shotPath, n)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the dashboard with the completed goal did not appear in 20 s (%d badge pixels; see %s)\napp output:\n%s", n, shotPath, d.out.String())
		}
		time.Sleep(300 * time.Millisecond)
	}
}

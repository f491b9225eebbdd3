package main

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
	"github.com/clusterspace/clusterspace/backend/notify/notifytest"
	"github.com/clusterspace/clusterspace/backend/procstat"
)

// minDistinctColours tells a rendered UI from a blank window: an empty webview or a solid
// background has one or two colours; a loading message a few dozen; the workspace with four
// terminals, tabs and a status bar several hundred.
const minDistinctColours = 150

// childProcesses counts the live child processes of pid whose command is name, from /proc.
func childProcesses(pid int, name string) int {
	n := 0
	for _, p := range procstat.All() {
		if p.Comm == name && p.Parent() == pid {
			n++
		}
	}
	return n
}

// startXvfb starts a virtual X server on a free display and returns its DISPLAY value.
func startXvfb(t testing.TB) string {
	t.Helper()
	display, stop, err := notifytest.Xvfb("1400x900x24")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return display
}

func distinctColours(img image.Image) int {
	seen := map[[3]uint32]struct{}{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			seen[[3]uint32{r >> 8, g >> 8, bl >> 8}] = struct{}{}
		}
	}
	return len(seen)
}

// desktopApp is the real desktop binary running under its own Xvfb.
type desktopApp struct {
	env    []string
	cmd    *exec.Cmd
	out    *lockedBuffer
	exited chan error
}

// startDesktop starts Xvfb and the desktop binary on dataDir, and waits for its window and for
// the UI to start the terminal shells of its first workspace (2 x 2): then the UI has loaded and
// reached Go through the Wails bindings.
func startDesktop(t *testing.T, dataDir string) *desktopApp {
	t.Helper()
	return startDesktopWith(t, dataDir, 4)
}

// startDesktopWith is startDesktop for a workspace with that many terminal panes.
func startDesktopWith(t *testing.T, dataDir string, shells int) *desktopApp {
	t.Helper()
	return startDesktopEnv(t, dataDir, shells)
}

// startDesktopEnv is startDesktopWith with more variables in the app's environment.
func startDesktopEnv(t testing.TB, dataDir string, shells int, env ...string) *desktopApp {
	t.Helper()
	bin := testBinary(t)
	out, err := exec.Command(bin, "--version").Output()
	if err != nil || !strings.Contains(string(out), "desktop,") {
		t.Fatalf("%s was built without the desktop window (%q, %v): build it with `make build`", bin, out, err)
	}
	display := startXvfb(t)
	d := &desktopApp{env: append(os.Environ(), "DISPLAY="+display), out: &lockedBuffer{}, exited: make(chan error, 1)}
	d.cmd = exec.Command(bin, "--data-dir", dataDir)
	d.cmd.Env = append(append(d.env, "WAYLAND_DISPLAY="), env...)
	d.cmd.Stdout, d.cmd.Stderr = d.out, d.out
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { d.exited <- d.cmd.Wait() }()
	t.Cleanup(func() {
		interruptThenKill(d.cmd.Process, d.exited, 5*time.Second)
	})

	if err := waitForWindow(d.env, 30*time.Second); err != nil {
		t.Fatalf("no ClusterSpace window appeared: %v\napp output:\n%s", err, d.out.String())
	}

	shellDeadline := time.Now().Add(30 * time.Second)
	for childProcesses(d.cmd.Process.Pid, "bash") < shells {
		if time.Now().After(shellDeadline) {
			shot := filepath.Join(artifactDir(t), "desktop-no-shells.png")
			d.screenshot(t, shot)
			t.Fatalf("the desktop UI did not start its %d terminal shells within 30 s (%d running; the window: %s)\napp output:\n%s",
				shells, childProcesses(d.cmd.Process.Pid, "bash"), shot, d.out.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	return d
}

// screenshot captures the whole virtual screen to path and decodes it.
func (d *desktopApp) screenshot(t testing.TB, path string) image.Image {
	t.Helper()
	select {
	case err := <-d.exited:
		t.Fatalf("the app exited: %v\n%s", err, d.out.String())
	default:
	}
	imp := exec.Command("import", "-window", "root", "png:"+path)
	imp.Env = d.env
	if msg, err := imp.CombinedOutput(); err != nil {
		t.Fatalf("screenshot: %v: %s", err, msg)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("decode %s: %v", path, err)
	}
	return img
}

// settledShot shoots until the picture shows a rendered UI (at least minDistinctColours) and
// stops changing in colour count, so the kept PNG shows the finished window.
func (d *desktopApp) settledShot(t *testing.T, path string) (image.Image, int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	colours := 0
	for {
		img := d.screenshot(t, path)
		prev := colours
		colours = distinctColours(img)
		if colours >= minDistinctColours && (colours <= prev || time.Now().After(deadline)) {
			return img, colours
		}
		if time.Now().After(deadline) {
			t.Fatalf("the window stayed blank: %d distinct colours in %s (want >= %d)\napp output:\n%s", colours, path, minDistinctColours, d.out.String())
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// TestDesktopSmoke launches the real desktop binary under Xvfb, waits for its window, and
// checks that the screenshot shows a rendered UI rather than a blank window.
func TestDesktopSmoke(t *testing.T) {
	d := startDesktop(t, t.TempDir())
	shotPath := filepath.Join(artifactDir(t), "desktop-smoke.png")
	_, colours := d.settledShot(t, shotPath)
	t.Logf("desktop screenshot: %s (%d distinct colours)", shotPath, colours)
}

// waitForWindow waits for a visible window titled exactly ClusterSpace on the env's display.
// It polls instead of using xdotool's --sync: a window the toolkit creates and destroys while
// xdotool reads its name makes xdotool fail with BadWindow, which is no answer either way.
func waitForWindow(env []string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		find := exec.Command("xdotool", "search", "--onlyvisible", "--name", "^ClusterSpace$")
		find.Env = env
		ids, err := find.Output()
		if err == nil && len(bytes.TrimSpace(ids)) > 0 {
			return nil
		}
		last = err
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("none within %v (last xdotool answer: %v)", timeout, last)
}

// TestDesktopTypingReachesAPaneAtStart: the desktop window starts with the keyboard in a pane's
// terminal, so keys typed into the window (real X key events through xdotool, no click) reach
// a shell: issue #29 found that typing did nothing until a pane was clicked.
func TestDesktopTypingReachesAPaneAtStart(t *testing.T) {
	d := startDesktop(t, t.TempDir())
	mark := filepath.Join(t.TempDir(), "typed")
	focus := exec.Command("sh", "-c", `id=$(xdotool search --onlyvisible --name '^ClusterSpace$' | head -1) && xdotool windowfocus --sync "$id"`)
	focus.Env = d.env
	if out, err := focus.CombinedOutput(); err != nil {
		t.Fatalf("xdotool windowfocus: %v\n%s", err, out)
	}
	// A shell takes keys once its terminal has attached, a moment after it starts: type again
	// until one of them has written the file, or give up after a few tries.
	for try := 1; ; try++ {
		typeCmd := exec.Command("xdotool", "type", "--delay", "20", "echo desktop-$((6*7)) > "+mark+"\n")
		typeCmd.Env = d.env
		if out, err := typeCmd.CombinedOutput(); err != nil {
			t.Fatalf("xdotool type: %v\n%s", err, out)
		}
		deadline := time.Now().Add(4 * time.Second)
		for time.Now().Before(deadline) {
			if b, err := os.ReadFile(mark); err == nil && strings.TrimSpace(string(b)) == "desktop-42" {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		if try == 3 {
			shotPath := filepath.Join(artifactDir(t), "desktop-typing-lost.png")
			d.screenshot(t, shotPath)
			t.Fatalf("keys typed into the window at start reached no shell (no %s after %d tries; the window: %s)\napp output:\n%s", mark, try, shotPath, d.out.String())
		}
	}
}

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

// iconSizes are the hicolor sizes the package must ship (scripts/package.sh ICON_SIZES).
var iconSizes = []int{16, 22, 24, 32, 48, 64, 128, 256, 512}

// TestDebianPackageInstallsALaunchableApp builds the .deb with scripts/package.sh (what
// `make package` runs) from the desktop build, unpacks it with dpkg-deb, checks the launcher
// entry with desktop-file-validate, the icons and the dependencies, and starts the packaged
// binary under Xvfb until its window maps.
func TestDebianPackageInstallsALaunchableApp(t *testing.T) {
	out := t.TempDir()
	const version = "0.1.0+test"
	cmd := exec.Command("scripts/package.sh", testBinary(t), version, out)
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("scripts/package.sh: %v\n%s", err, b)
	}
	deb := filepath.Join(out, "clusterspace_"+version+"_amd64.deb")
	if strings.TrimSpace(string(b)) != deb {
		t.Fatalf("package.sh printed %q, want %q", b, deb)
	}

	fields := func(name string) string {
		v, err := exec.Command("dpkg-deb", "--field", deb, name).Output()
		if err != nil {
			t.Fatalf("dpkg-deb --field %s: %v", name, err)
		}
		return strings.TrimSpace(string(v))
	}
	if got := fields("Package") + " " + fields("Version") + " " + fields("Architecture"); got != "clusterspace "+version+" amd64" {
		t.Fatalf("package identity %q", got)
	}
	if deps := fields("Depends"); !strings.Contains(deps, "libwebkit2gtk-4.1-0") || !strings.Contains(deps, "libgtk-3-0") {
		t.Fatalf("Depends %q lacks WebKitGTK 4.1 or GTK 3", deps)
	}
	if deps := fields("Depends"); !strings.Contains(deps, "bubblewrap") || !strings.Contains(deps, "socat") {
		t.Fatalf("Depends %q lacks bubblewrap or socat, without which no goal can be confined", deps)
	}
	if rec := fields("Recommends"); !strings.Contains(rec, "chromium") {
		t.Fatalf("Recommends %q lacks chromium (browser panes)", rec)
	}

	root := t.TempDir()
	if b, err := exec.Command("dpkg-deb", "-x", deb, root).CombinedOutput(); err != nil {
		t.Fatalf("dpkg-deb -x: %v\n%s", err, b)
	}
	desktop := filepath.Join(root, "usr/share/applications/clusterspace.desktop")
	if b, err := exec.Command("desktop-file-validate", desktop).CombinedOutput(); err != nil || len(bytes.TrimSpace(b)) != 0 {
		t.Fatalf("desktop-file-validate: %v\n%s", err, b)
	}
	entry, _ := os.ReadFile(desktop)
	for _, line := range []string{"Exec=clusterspace", "Icon=clusterspace", "Name=ClusterSpace", "Type=Application"} {
		if !strings.Contains(string(entry), "\n"+line+"\n") {
			t.Errorf("the launcher entry lacks %q:\n%s", line, entry)
		}
	}
	for _, size := range iconSizes {
		p := filepath.Join(root, "usr/share/icons/hicolor", strconv.Itoa(size)+"x"+strconv.Itoa(size), "apps/clusterspace.png")
		f, err := os.Open(p)
		if err != nil {
			t.Fatalf("icon %d px: %v", size, err)
		}
		cfg, err := png.DecodeConfig(f)
		f.Close()
		if err != nil || cfg.Width != size || cfg.Height != size {
			t.Fatalf("icon %s: %dx%d, %v", p, cfg.Width, cfg.Height, err)
		}
	}

	// The packaged binary, run as the launcher would, opens its window.
	bin := filepath.Join(root, "usr/bin/clusterspace")
	if info, err := os.Stat(bin); err != nil || info.Mode().Perm()&0o111 == 0 {
		t.Fatalf("usr/bin/clusterspace: %v %v", info, err)
	}
	display := startXvfb(t)
	env := append(os.Environ(), "DISPLAY="+display, "WAYLAND_DISPLAY=")
	app := exec.Command(bin, "--data-dir", t.TempDir())
	app.Env = env
	var appOut lockedBuffer
	app.Stdout, app.Stderr = &appOut, &appOut
	if err := app.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- app.Wait() }()
	t.Cleanup(func() {
		interruptThenKill(app.Process, exited, 5*time.Second)
	})
	if err := waitForWindow(env, 30*time.Second); err != nil {
		t.Fatalf("the packaged app mapped no window: %v\napp output:\n%s", err, appOut.String())
	}
}

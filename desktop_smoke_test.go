package main

import (
	"bufio"
	"bytes"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// minDistinctColours tells a rendered UI from a blank window: an empty webview or a solid
// background has one or two colours; a loading message a few dozen; the workspace with four
// terminals, tabs and a status bar several hundred.
const minDistinctColours = 150

// childProcesses counts the live child processes of pid whose command is name, from /proc.
func childProcesses(pid int, name string) int {
	entries, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range entries {
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …; comm may hold spaces, so split after the last ')'.
		s := string(stat)
		open, close := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || close < open {
			continue
		}
		fields := strings.Fields(s[close+1:])
		if len(fields) >= 2 && s[open+1:close] == name && fields[1] == strconv.Itoa(pid) {
			n++
		}
	}
	return n
}

// startXvfb starts a virtual X server on a free display and returns its DISPLAY value.
func startXvfb(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("Xvfb"); err != nil {
		t.Fatal("Xvfb is not installed: run scripts/setup.sh (it installs xvfb)")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	// -displayfd: Xvfb picks a free display number and writes it to fd 3 once it is ready.
	cmd := exec.Command("Xvfb", "-displayfd", "3", "-screen", "0", "1400x900x24", "-nolisten", "tcp")
	cmd.ExtraFiles = []*os.File{w}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(r).ReadString('\n')
		line <- strings.TrimSpace(s)
	}()
	select {
	case n := <-line:
		if n == "" {
			t.Fatalf("Xvfb did not start: %s", stderr.String())
		}
		return ":" + n
	case <-time.After(15 * time.Second):
		t.Fatalf("Xvfb gave no display in 15 s: %s", stderr.String())
	}
	return ""
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

// TestDesktopSmoke launches the real desktop binary under Xvfb, waits for its window, and
// checks that the screenshot shows a rendered UI rather than a blank window.
func TestDesktopSmoke(t *testing.T) {
	bin := testBinary(t)
	out, err := exec.Command(bin, "--version").Output()
	if err != nil || !strings.Contains(string(out), "desktop,") {
		t.Fatalf("%s was built without the desktop window (%q, %v): build it with `make build`", bin, out, err)
	}
	display := startXvfb(t)
	env := append(os.Environ(), "DISPLAY="+display)

	app := exec.Command(bin, "--data-dir", t.TempDir())
	app.Env = append(env, "WAYLAND_DISPLAY=")
	var appOut lockedBuffer
	app.Stdout, app.Stderr = &appOut, &appOut
	if err := app.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- app.Wait() }()
	t.Cleanup(func() {
		app.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			app.Process.Kill()
			<-exited
		}
	})

	// The window: xdotool waits for a visible one with the exact title.
	ctx := withTimeout(t, 30*time.Second)
	find := exec.CommandContext(ctx, "xdotool", "search", "--sync", "--onlyvisible", "--name", "^ClusterSpace$")
	find.Env = env
	if ids, err := find.Output(); err != nil || len(bytes.TrimSpace(ids)) == 0 {
		t.Fatalf("no ClusterSpace window appeared: %v\napp output:\n%s", err, appOut.String())
	}

	// The UI has loaded and reached Go through the Wails bindings when its terminal panes
	// have started their shells: one bash per pane of the first workspace (2 x 2).
	shellDeadline := time.Now().Add(30 * time.Second)
	for childProcesses(app.Process.Pid, "bash") < 4 {
		if time.Now().After(shellDeadline) {
			t.Fatalf("the desktop UI did not start its 4 terminal shells within 30 s (%d running)\napp output:\n%s",
				childProcesses(app.Process.Pid, "bash"), appOut.String())
		}
		time.Sleep(200 * time.Millisecond)
	}

	// Then poll screenshots until the shells' prompts are drawn.
	shotPath := filepath.Join(artifactDir(t), "desktop-smoke.png")
	deadline := time.Now().Add(30 * time.Second)
	var colours int
	for {
		select {
		case err := <-exited:
			t.Fatalf("the app exited while starting: %v\n%s", err, appOut.String())
		default:
		}
		imp := exec.Command("import", "-window", "root", "png:"+shotPath)
		imp.Env = env
		if msg, err := imp.CombinedOutput(); err != nil {
			t.Fatalf("screenshot: %v: %s", err, msg)
		}
		f, err := os.Open(shotPath)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatalf("decode %s: %v", shotPath, err)
		}
		prev := colours
		colours = distinctColours(img)
		// Past the bar, keep shooting until the picture settles (the prompts get drawn), so the
		// kept PNG shows the finished window.
		if colours >= minDistinctColours && colours <= prev {
			break
		}
		if time.Now().After(deadline) && colours >= minDistinctColours {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the window stayed blank: %d distinct colours in %s (want >= %d)\napp output:\n%s", colours, shotPath, minDistinctColours, appOut.String())
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("desktop screenshot: %s (%d distinct colours)", shotPath, colours)
}

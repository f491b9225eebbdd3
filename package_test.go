package main

import (
	"bytes"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

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
		app.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			app.Process.Kill()
			<-exited
		}
	})
	if err := waitForWindow(env, 30*time.Second); err != nil {
		t.Fatalf("the packaged app mapped no window: %v\napp output:\n%s", err, appOut.String())
	}
}

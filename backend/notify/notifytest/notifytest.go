// Package notifytest starts the real desktop services the notification and keyring tests
// talk to: a private session D-Bus, and dunst (a notification daemon) on a virtual X display.
package notifytest

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/godbus/dbus/v5"
)

// busConfig is a session bus that activates no services: only what a test starts is on it, so
// "no keyring" or "no notification daemon" is real, and nothing starts one behind its back.
const busConfig = `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:dir=%s</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
`

// startTimeout bounds each daemon's start; they take well under a second.
const startTimeout = 10 * time.Second

// SessionBus starts dbus-daemon (apt dbus) as dbus-run-session would, and points this process
// at it (DBUS_SESSION_BUS_ADDRESS). stop ends it.
func SessionBus() (stop func(), err error) {
	dir, err := os.MkdirTemp("", "clusterspace-bus-")
	if err != nil {
		return nil, err
	}
	conf := filepath.Join(dir, "session.conf")
	if err := os.WriteFile(conf, fmt.Appendf(nil, busConfig, dir), 0o644); err != nil {
		return nil, err
	}
	cmd := exec.Command("dbus-daemon", "--config-file="+conf, "--nofork", "--print-address")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("dbus-daemon (scripts/setup.sh installs dbus): %w", err)
	}
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, fmt.Errorf("dbus-daemon printed no address: %w", err)
	}
	os.Setenv("DBUS_SESSION_BUS_ADDRESS", strings.TrimSpace(addr))
	return func() { cmd.Process.Kill(); cmd.Wait(); os.RemoveAll(dir) }, nil
}

// WaitName waits until name is owned on the session bus (or, with owned false, until it is
// not), and says whether that happened in time.
func WaitName(name string, owned bool) bool {
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		return false
	}
	defer conn.Close()
	for deadline := time.Now().Add(startTimeout); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var has bool
		if conn.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, name).Store(&has) == nil && has == owned {
			return true
		}
	}
	return false
}

// xvfbTimeout bounds Xvfb's start; a loaded CI machine has taken over 10 s.
const xvfbTimeout = 15 * time.Second

// Xvfb starts a virtual X server on a free display with a screen of size (such as
// "1024x768x24": width, height, depth) and returns its DISPLAY value.
func Xvfb(size string) (display string, stop func(), err error) {
	r, w, err := os.Pipe()
	if err != nil {
		return "", nil, err
	}
	defer r.Close()
	// -displayfd: Xvfb picks a free display number and writes it to fd 3 once it is ready.
	cmd := exec.Command("Xvfb", "-displayfd", "3", "-screen", "0", size, "-nolisten", "tcp")
	cmd.ExtraFiles = []*os.File{w}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		w.Close()
		return "", nil, fmt.Errorf("Xvfb (scripts/setup.sh installs xvfb): %w", err)
	}
	w.Close()
	stop = func() { cmd.Process.Kill(); cmd.Wait() }
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(r).ReadString('\n')
		line <- strings.TrimSpace(s)
	}()
	select {
	case n := <-line:
		if n == "" {
			stop()
			return "", nil, fmt.Errorf("Xvfb did not start: %s", stderr.String())
		}
		return ":" + n, stop, nil
	case <-time.After(xvfbTimeout):
		stop()
		return "", nil, fmt.Errorf("Xvfb gave no display in %v: %s", xvfbTimeout, stderr.String())
	}
}

// Dunst is the dunst notification daemon (apt dunst) serving org.freedesktop.Notifications on
// the session bus, drawing on an X display.
type Dunst struct {
	cmd *exec.Cmd
	out bytes.Buffer
}

// Notification is one notification as dunst keeps it.
type Notification struct {
	AppName, Summary, Body string
}

// StartDunst starts dunst on display with the default settings and waits until it owns the
// notification service's name.
func StartDunst(display string) (*Dunst, error) {
	dir, err := os.MkdirTemp("", "clusterspace-dunst-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	rc := filepath.Join(dir, "dunstrc")
	if err := os.WriteFile(rc, nil, 0o644); err != nil {
		return nil, err
	}
	d := &Dunst{cmd: exec.Command("dunst", "-config", rc)}
	d.cmd.Env = append(os.Environ(), "DISPLAY="+display, "WAYLAND_DISPLAY=")
	d.cmd.Stdout, d.cmd.Stderr = &d.out, &d.out
	if err := d.cmd.Start(); err != nil {
		return nil, fmt.Errorf("dunst (scripts/setup.sh installs dunst): %w", err)
	}
	if !WaitName("org.freedesktop.Notifications", true) {
		d.Stop()
		return nil, fmt.Errorf("dunst did not take org.freedesktop.Notifications in 10 s:\n%s", d.out.String())
	}
	return d, nil
}

// Stop ends dunst.
func (d *Dunst) Stop() {
	if d.cmd.ProcessState == nil {
		d.cmd.Process.Kill()
		d.cmd.Wait()
	}
}

// Shown closes every notification dunst is showing or holding back and returns all it has
// received, oldest first, from its history (dunst's own D-Bus interface, what dunstctl uses).
func (d *Dunst) Shown() ([]Notification, error) {
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	obj := conn.Object("org.freedesktop.Notifications", "/org/freedesktop/Notifications")
	if err := obj.Call("org.dunstproject.cmd0.NotificationCloseAll", 0).Err; err != nil {
		return nil, fmt.Errorf("dunst close-all: %w", err)
	}
	var history []map[string]dbus.Variant
	if err := obj.Call("org.dunstproject.cmd0.NotificationListHistory", 0).Store(&history); err != nil {
		return nil, fmt.Errorf("dunst history: %w", err)
	}
	out := make([]Notification, 0, len(history))
	for i := len(history) - 1; i >= 0; i-- { // dunst lists the newest first
		h := history[i]
		str := func(k string) string { s, _ := h[k].Value().(string); return s }
		out = append(out, Notification{AppName: str("appname"), Summary: str("summary"), Body: str("body")})
	}
	return out, nil
}

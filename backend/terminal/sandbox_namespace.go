package terminal

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
)

// A confined command runs inside bubblewrap (bwrap), the sandbox engine Flatpak, Claude Code
// and Codex CLI use on Linux, before Landlock and the socket filter narrow it further:
//   - its own PID namespace with a fresh /proc: no process of the app, nor any ancestor's
//     /proc/PID/environ (where an API key passed on a command line or by a wrapper sits), is
//     visible;
//   - its own network namespace with only a loopback of its own: the app's loopback services
//     (`serve`, Chromium's DevTools port, MCP HTTP servers) are not on it. With network allowed
//     it reaches the outside only through the app's egress proxy (Sandbox.Proxy);
//   - its own IPC namespace, and the filesystem read-only but for its writable dirs, with the
//     hidden dirs (data dirs, config dir, keyrings) and hidden files (a password file) covered
//     by empty ones, so they are gone even before Landlock refuses them.
//
// bwrap works unprivileged through user namespaces on Debian 12, and on Ubuntu 24.04 through
// the AppArmor profile its package ships; `make setup` and the .deb install it.

// ErrNoBwrap means bubblewrap is not installed.
var ErrNoBwrap = errors.New("bubblewrap (bwrap) is not installed")

// findBwrap returns the bwrap to run: the configured one, else the one on PATH.
func findBwrap(configured string) (string, error) {
	if configured != "" {
		return configured, nil
	}
	path, err := exec.LookPath("bwrap")
	if err != nil {
		return "", fmt.Errorf("cannot confine the terminal: %w (run `make setup`, or `apt-get install bubblewrap`)", ErrNoBwrap)
	}
	return path, nil
}

// namespaceArgs is the bwrap command line that puts the command after it in its own
// namespaces (see above). The sandbox has been checked: its dirs are absolute and real.
func (s Sandbox) namespaceArgs(bwrap string) []string {
	args := []string{bwrap,
		"--die-with-parent", // the pane's end ends everything inside
		"--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--hostname", "sandbox",
		"--ro-bind", "/", "/",
		// The host's /dev, so the pane's PTY (inherited as stdin) keeps its name: Landlock
		// decides which devices may be written.
		"--dev-bind", "/dev", "/dev",
		"--proc", "/proc",
	}
	for _, d := range s.WritableDirs {
		args = append(args, "--bind", d, d)
	}
	for _, h := range s.HiddenDirs {
		st, err := os.Stat(h)
		switch {
		case err != nil:
			// Not there yet: nothing to cover; Landlock refuses it if it appears.
		case st.IsDir():
			args = append(args, "--tmpfs", h, "--remount-ro", h)
		default:
			args = append(args, "--ro-bind", "/dev/null", h)
		}
	}
	return append(args, "--")
}

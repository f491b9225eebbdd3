// Package procfd keeps pipes this process did not open for sharing out of the processes it
// starts.
//
// Go opens every descriptor close-on-exec, but C code in the same process need not: the Wails
// asset server answers each of the window's requests through a pipe it opens without
// FD_CLOEXEC on purpose (Wails' pkg/assetserver/webview). A child started while such an
// answer is being written (a terminal's shell, a workspace's Chromium, an MCP server) inherits
// the pipe's write end and keeps it open for as long as it lives, so the webview never sees
// the answer end: a lazily loaded script (xterm.js) then never loads and the window's
// terminals stay blank. SealInherited, called just before a long-lived child is started,
// marks such pipes close-on-exec.
package procfd

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// SealInherited marks every pipe of this process that a started child would inherit
// (descriptors above 2 without FD_CLOEXEC) close-on-exec, and says how many it marked. The
// parent's use of them is unchanged. Other kinds of descriptor are left alone: nothing seen
// leaks them, and C libraries may hand some to their own children on purpose.
//
// A pipe opened between this call and the child's start still leaks; call it right before
// starting. Best effort: a descriptor that cannot be read or changed is skipped.
func SealInherited() int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0
	}
	sealed := 0
	for _, e := range entries {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd <= 2 {
			continue
		}
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err != nil || flags&unix.FD_CLOEXEC != 0 {
			continue
		}
		var st unix.Stat_t
		if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
			continue
		}
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, flags|unix.FD_CLOEXEC); err == nil {
			sealed++
		}
	}
	return sealed
}

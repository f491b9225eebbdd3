package terminal

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// LandlockSupport reports the Landlock ABI version the kernel offers, or why it offers none
// (not built in, or not enabled at boot).
func LandlockSupport() (abi int, err error) {
	abi, err = ll.LandlockGetABIVersion()
	if err != nil {
		return 0, fmt.Errorf("%w: the kernel does not offer it (%v); it needs Linux 5.13+ with landlock in the lsm= boot list", ErrNoLandlock, err)
	}
	return abi, nil
}

// confinedDevices are the device files a confined shell may open for writing besides its
// terminal: writing to them changes nothing on disk.
var confinedDevices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty"}

// restrictSelf applies the sandbox to this process (every thread) and, through exec, to the
// command it runs next. Reading and executing stay allowed everywhere but the hidden dirs.
func restrictSelf(s Sandbox) error {
	cfg := landlock.V11
	cfg.Scoped = ll.ScopeSignal // no signals to processes outside the sandbox (the app itself)
	if s.NoNetwork {
		cfg.Scoped |= ll.ScopeAbstractUnixSocket // nor a way around it through abstract sockets
	} else {
		cfg.HandledAccessNet = 0
	}
	devices := confinedDevices
	if tty, err := os.Readlink("/proc/self/fd/0"); err == nil && strings.HasPrefix(tty, "/dev/pts/") {
		devices = append(devices, tty)
	}
	dirs, files := readableRules(s.HiddenDirs)
	rules := []landlock.Rule{
		landlock.RODirs(dirs...).IgnoreIfMissing(),
		landlock.RWFiles(devices...).WithIoctlDev().IgnoreIfMissing(),
	}
	if len(files) > 0 {
		rules = append(rules, landlock.ROFiles(files...).IgnoreIfMissing())
	}
	if len(s.WritableDirs) > 0 {
		rules = append(rules, landlock.RWDirs(s.WritableDirs...).WithRefer())
	}
	// BestEffort only drops rights newer than the kernel; check() has already refused kernels
	// too old for what was asked, so nothing promised is dropped.
	if err := cfg.BestEffort().Restrict(rules...); err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	return restrictSockets(s.NoNetwork)
}

// readableRules lists what a confined shell may read and execute: everything but the hidden
// dirs. Landlock only grants, and a grant on a directory covers all below it, so a hidden dir
// cannot be cut out of a readable parent. Instead the rules walk down each path to a hidden
// dir and grant every sibling along the way (dirs as trees, other entries as single files),
// but neither the hidden dir nor the directories on the way: those can be entered, and what
// they hold opened by name, but not listed (`ls /` and `ls ~` fail when the data dir is under
// them). With nothing hidden the answer is just "/".
func readableRules(hidden []string) (dirs, files []string) {
	var walk func(dir string)
	walk = func(dir string) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return // Best effort: an unreadable dir is simply not granted.
		}
		for _, e := range entries {
			p := filepath.Join(dir, e.Name())
			switch {
			case slices.ContainsFunc(hidden, func(h string) bool { return within(p, h) }):
				continue
			case e.IsDir() && slices.ContainsFunc(hidden, func(h string) bool { return within(h, p) }):
				walk(p)
				continue
			}
			// A rule follows a symlink to its target, so a link into (or above) a hidden dir
			// must not become a rule; the target is granted, or not, on its own path.
			real, err := filepath.EvalSymlinks(p)
			if err != nil || slices.ContainsFunc(hidden, func(h string) bool { return within(real, h) || within(h, real) }) {
				continue
			}
			if st, err := os.Stat(real); err != nil {
				continue // gone meanwhile
			} else if st.IsDir() {
				dirs = append(dirs, p)
			} else {
				files = append(files, p)
			}
		}
	}
	if len(hidden) == 0 {
		return []string{"/"}, nil
	}
	walk("/")
	return dirs, files
}

package terminal

import (
	"fmt"
	"os"
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
// command it runs next. Reading and executing stay allowed everywhere.
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
	rules := []landlock.Rule{
		landlock.RODirs("/"),
		landlock.RWFiles(devices...).WithIoctlDev().IgnoreIfMissing(),
	}
	if len(s.WritableDirs) > 0 {
		rules = append(rules, landlock.RWDirs(s.WritableDirs...).WithRefer())
	}
	// BestEffort only drops rights newer than the kernel; check() has already refused kernels
	// too old for what was asked, so nothing promised is dropped.
	if err := cfg.BestEffort().Restrict(rules...); err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	return nil
}

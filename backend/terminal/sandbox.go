package terminal

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// Landlock ABI versions the confinement needs: 3 is the first that also controls truncating
// files (below it a confined shell could still empty files outside its directories), 4 the
// first that controls TCP connect and bind.
const (
	minLandlockABI        = 3
	minLandlockNetworkABI = 4
)

// Sandbox confines a terminal with Landlock: it may write only under WritableDirs (plus its
// terminal and a few harmless devices such as /dev/null), reads everywhere, and with
// NoNetwork may not open or accept TCP connections.
type Sandbox struct {
	WritableDirs []string
	NoNetwork    bool
}

// check resolves the directories and asks whether the kernel can enforce the sandbox, so
// Open fails with a reason instead of starting a shell that dies at once.
func (s Sandbox) check() (Sandbox, error) {
	abi, err := LandlockSupport()
	if err != nil {
		return s, fmt.Errorf("cannot confine the terminal: %w", err)
	}
	if abi < minLandlockABI {
		return s, fmt.Errorf("cannot confine the terminal: the kernel has Landlock ABI %d, and confining writes needs ABI %d (Linux 6.2 or later)", abi, minLandlockABI)
	}
	if s.NoNetwork && abi < minLandlockNetworkABI {
		return s, fmt.Errorf("cannot cut the terminal off the network: the kernel has Landlock ABI %d, and that needs ABI %d (Linux 6.7 or later)", abi, minLandlockNetworkABI)
	}
	dirs := make([]string, 0, len(s.WritableDirs))
	for _, d := range s.WritableDirs {
		abs, err := filepath.Abs(d)
		if err == nil {
			abs, err = filepath.EvalSymlinks(abs)
		}
		if st, serr := os.Stat(abs); err != nil || serr != nil || !st.IsDir() {
			return s, fmt.Errorf("sandbox dir %q does not exist: create it or pick another", d)
		}
		dirs = append(dirs, abs)
	}
	return Sandbox{WritableDirs: dirs, NoNetwork: s.NoNetwork}, nil
}

// helperArgs is the command line that confines the command that follows it.
func (s Sandbox) helperArgs(helper string) []string {
	args := []string{helper, "sandbox-exec"}
	for _, d := range s.WritableDirs {
		args = append(args, "--write", d)
	}
	if s.NoNetwork {
		args = append(args, "--no-network")
	}
	return append(args, "--")
}

type dirList []string

func (d *dirList) String() string     { return strings.Join(*d, ",") }
func (d *dirList) Set(v string) error { *d = append(*d, v); return nil }

// SandboxExecMain is the `sandbox-exec` subcommand: `sandbox-exec [--write DIR]…
// [--no-network] -- COMMAND ARGS…` restricts itself with Landlock and then executes COMMAND,
// which inherits the restrictions (as do its children, for good). It returns only on failure,
// with 125 for a bad invocation or a sandbox it cannot set up, 127 when COMMAND is not found
// and 126 when it cannot be executed (the shell's conventions).
func SandboxExecMain(args []string) int {
	return sandboxExec(args, os.Stderr)
}

func sandboxExec(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("sandbox-exec", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var dirs dirList
	fs.Var(&dirs, "write", "")
	noNetwork := fs.Bool("no-network", false, "")
	if err := fs.Parse(args); err != nil || fs.NArg() == 0 {
		fmt.Fprintln(stderr, "usage: clusterspace sandbox-exec [--write DIR]... [--no-network] -- COMMAND [ARGS...]")
		return 125
	}
	command := fs.Args()
	path, err := exec.LookPath(command[0])
	if err != nil {
		fmt.Fprintf(stderr, "clusterspace sandbox-exec: %s: command not found\n", command[0])
		return 127
	}
	sb, err := Sandbox{WritableDirs: dirs, NoNetwork: *noNetwork}.check()
	if err == nil {
		err = restrictSelf(sb)
	}
	if err != nil {
		fmt.Fprintf(stderr, "clusterspace sandbox-exec: %v\n", err)
		return 125
	}
	err = syscall.Exec(path, command, os.Environ())
	fmt.Fprintf(stderr, "clusterspace sandbox-exec: %s: %v\n", command[0], err)
	if errors.Is(err, syscall.ENOENT) {
		return 127
	}
	return 126
}

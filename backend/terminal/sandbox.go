package terminal

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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

// Sandbox confines a terminal: bubblewrap gives it namespaces of its own (see
// sandbox_namespace.go), then Landlock lets it write only under WritableDirs (plus its
// terminal and a few harmless devices such as /dev/null) and read everywhere except under
// HiddenDirs; it may not create Unix sockets (see socketFilter), and with NoNetwork may not
// open or accept TCP connections nor use any other network socket.
type Sandbox struct {
	WritableDirs []string
	// HiddenDirs may be neither read nor listed: the app's data dirs (keys and database), its
	// config dir, the keyring files, a password file (files may be named here too). They need
	// not exist yet: one created later is hidden too. The directories on the way to them
	// cannot be listed either (see readableRules).
	HiddenDirs []string
	NoNetwork  bool
	// Proxy, with network allowed, is the Unix socket of the app's egress proxy: the only way
	// out of the sandbox's own network namespace (see sandbox_proxy.go). Without it, a
	// confined command reaches no network but its own loopback.
	Proxy string
	// Scratch, if set, is a private writable dir (created 0700) where the shell's temporary
	// files and caches go (ScratchEnv): everyday tools write those under /tmp or HOME, which a
	// confined shell cannot, and fail on every command without them.
	Scratch string
}

// ScratchEnv is the environment that sends a confined shell's temporary files and caches to
// the scratch dir: TMPDIR (and TMP, TEMP), XDG_CACHE_HOME (pip, pyenv and most tools), Go's
// build cache and npm's cache.
func ScratchEnv(scratch string) []string {
	tmp, cache := filepath.Join(scratch, "tmp"), filepath.Join(scratch, "cache")
	return []string{"TMPDIR=" + tmp, "TMP=" + tmp, "TEMP=" + tmp, "XDG_CACHE_HOME=" + cache,
		"GOCACHE=" + filepath.Join(cache, "go-build"), "npm_config_cache=" + filepath.Join(cache, "npm")}
}

// makeScratch creates the scratch dir and the dirs ScratchEnv names in it, private to the user.
func makeScratch(scratch string) error {
	for _, d := range []string{"tmp", filepath.Join("cache", "go-build"), filepath.Join("cache", "npm")} {
		if err := os.MkdirAll(filepath.Join(scratch, d), 0o700); err != nil {
			return fmt.Errorf("cannot create the confined shell's scratch dir %q (%v): free some space or fix its permissions", scratch, err)
		}
	}
	return os.Chmod(scratch, 0o700)
}

// userSecretDirs are directories of the person running the app that a confined shell never
// reads, whatever the caller hides: the keyring files (encrypted, but an offline guess at the
// login password is still worth hiding them from an agent).
func userSecretDirs() []string {
	home, err := os.UserHomeDir()
	if err != nil {
		return nil // no home, no keyrings under it
	}
	return []string{filepath.Join(home, ".local", "share", "keyrings")}
}

// resolveHidden makes p absolute and resolves the symlinks of the part of it that exists, so
// it matches the real paths the read rules are built from even before the rest exists.
func resolveHidden(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	rest := ""
	for dir := abs; ; dir = filepath.Dir(dir) {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(real, rest), nil
		}
		if dir == "/" {
			return abs, nil
		}
		rest = filepath.Join(filepath.Base(dir), rest)
	}
}

// within reports whether p is dir or below it.
func within(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
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
	if err := networkFilterSupport(); err != nil {
		return s, err
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
	hidden := make([]string, 0, len(s.HiddenDirs))
	for _, h := range s.HiddenDirs {
		real, err := resolveHidden(h)
		if err != nil || real == "/" {
			return s, fmt.Errorf("cannot hide %q from the confined terminal: pass a directory other than /", h)
		}
		for _, d := range dirs {
			if within(real, d) {
				return s, fmt.Errorf("sandbox dir %q contains %q, which a confined terminal must not read: pick a sandbox dir outside it", d, h)
			}
			if within(d, real) {
				return s, fmt.Errorf("sandbox dir %q is inside %q, which a confined terminal must not read: pick a sandbox dir outside it", d, h)
			}
		}
		if !slices.Contains(hidden, real) {
			hidden = append(hidden, real)
		}
	}
	if s.Proxy != "" && !filepath.IsAbs(s.Proxy) {
		return s, fmt.Errorf("egress proxy socket %q is not an absolute path", s.Proxy)
	}
	return Sandbox{WritableDirs: dirs, HiddenDirs: hidden, NoNetwork: s.NoNetwork, Scratch: s.Scratch, Proxy: s.Proxy}, nil
}

// helperArgs is the command line that confines the command that follows it.
func (s Sandbox) helperArgs(helper string) []string {
	args := []string{helper, "sandbox-exec"}
	for _, d := range s.WritableDirs {
		args = append(args, "--write", d)
	}
	for _, d := range s.HiddenDirs {
		args = append(args, "--hide", d)
	}
	if s.NoNetwork {
		args = append(args, "--no-network")
	} else if s.Proxy != "" {
		args = append(args, "--proxy", s.Proxy)
	}
	return append(args, "--")
}

// commandLine is the whole confined command line: bwrap's namespaces, then the helper's
// Landlock and socket filter, then argv.
func (s Sandbox) commandLine(bwrap, helper string, argv []string) []string {
	return append(append(s.namespaceArgs(bwrap), s.helperArgs(helper)...), argv...)
}

type dirList []string

func (d *dirList) String() string     { return strings.Join(*d, ",") }
func (d *dirList) Set(v string) error { *d = append(*d, v); return nil }

// SandboxExecMain is the `sandbox-exec` subcommand: `sandbox-exec [--write DIR]…
// [--hide DIR]… [--no-network | --proxy SOCKET] -- COMMAND ARGS…` starts the relay to the
// egress proxy (with --proxy), restricts itself with Landlock and then executes COMMAND,
// which inherits the restrictions (as do its children, for good). It returns only on failure,
// with 125 for a bad invocation or a sandbox it cannot set up, 127 when COMMAND is not found
// and 126 when it cannot be executed (the shell's conventions).
func SandboxExecMain(args []string) int {
	return sandboxExec(args, os.Stderr)
}

func sandboxExec(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("sandbox-exec", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var dirs, hidden dirList
	fs.Var(&dirs, "write", "")
	fs.Var(&hidden, "hide", "")
	noNetwork := fs.Bool("no-network", false, "")
	proxy := fs.String("proxy", "", "")
	if err := fs.Parse(args); err != nil || fs.NArg() == 0 || (*noNetwork && *proxy != "") {
		fmt.Fprintln(stderr, "usage: clusterspace sandbox-exec [--write DIR]... [--hide DIR]... [--no-network | --proxy SOCKET] -- COMMAND [ARGS...]")
		return 125
	}
	command := fs.Args()
	path, err := exec.LookPath(command[0])
	if err != nil {
		fmt.Fprintf(stderr, "clusterspace sandbox-exec: %s: command not found\n", command[0])
		return 127
	}
	sb, err := Sandbox{WritableDirs: dirs, HiddenDirs: hidden, NoNetwork: *noNetwork, Proxy: *proxy}.check()
	if err == nil && sb.Proxy != "" {
		err = startRelay(sb.Proxy)
	}
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

package terminaltest

import (
	"fmt"
	"os"
	"testing"

	"github.com/clusterspace/clusterspace/backend/terminal"
)

// Run runs a package's tests with a clean HOME (see IsolateHome) and returns their exit code,
// for os.Exit in TestMain. When sshd is not nil, a real OpenSSH server is started first for
// the package named pkg and stored there, and closed after; failing to start it fails the
// run, naming pkg.
func Run(m *testing.M, pkg string, sshd **SSHD) int {
	cleanup := IsolateHome()
	defer cleanup()
	if sshd != nil {
		s, err := StartSSHD(pkg)
		if err != nil {
			fmt.Fprintln(os.Stderr, pkg+" tests:", err)
			return 1
		}
		*sshd = s
		defer s.Close()
	}
	return m.Run()
}

// ServeSandboxExec makes this test binary the `clusterspace sandbox-exec` helper when it is
// run as one (its first argument sandbox-exec), and exits when the helper does: the engine
// confines a goal's shell by running its own executable, which in a test is the test binary.
// Otherwise it returns at once.
func ServeSandboxExec() {
	if len(os.Args) > 1 && os.Args[1] == "sandbox-exec" {
		os.Exit(terminal.SandboxExecMain(os.Args[2:]))
	}
}

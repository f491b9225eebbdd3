package fleet_test

import (
	"os"
	"testing"

	"github.com/clusterspace/clusterspace/backend/terminal"
	"github.com/clusterspace/clusterspace/backend/terminal/terminaltest"
)

// TestMain lets this test binary be the engine's `sandbox-exec` helper (the engine runs its
// own executable to confine a goal's shell to the sandbox), and gives the shells a clean HOME.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "sandbox-exec" {
		os.Exit(terminal.SandboxExecMain(os.Args[2:]))
	}
	cleanup := terminaltest.IsolateHome()
	code := m.Run()
	cleanup()
	os.Exit(code)
}

package fleet_test

import (
	"os"
	"testing"

	"github.com/clusterspace/clusterspace/backend/terminal/terminaltest"
)

// TestMain lets this test binary be the engine's `sandbox-exec` helper (the engine runs its
// own executable to confine a goal's shell to the sandbox), and gives the shells a clean HOME.
func TestMain(m *testing.M) {
	terminaltest.ServeSandboxExec()
	os.Exit(terminaltest.Run(m, "fleet", nil))
}

package engine

import (
	"os"
	"testing"

	"github.com/clusterspace/clusterspace/backend/mcp/mcptest"
	"github.com/clusterspace/clusterspace/backend/terminal"
	"github.com/clusterspace/clusterspace/backend/terminal/terminaltest"
)

// TestMain gives the shells the engine's goals start a clean HOME.
func TestMain(m *testing.M) {
	// The engine confines goals' shells with this executable as the sandbox helper.
	if len(os.Args) > 1 && os.Args[1] == "sandbox-exec" {
		os.Exit(terminal.SandboxExecMain(os.Args[2:]))
	}
	mcptest.ServeIfAsked() // the MCP server the extension tests start is this binary
	cleanup := terminaltest.IsolateHome()
	code := m.Run()
	cleanup()
	os.Exit(code)
}

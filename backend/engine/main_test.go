package engine

import (
	"os"
	"testing"

	"github.com/clusterspace/clusterspace/backend/mcp/mcptest"
	"github.com/clusterspace/clusterspace/backend/terminal/terminaltest"
)

// TestMain gives the shells the engine's goals start a clean HOME.
func TestMain(m *testing.M) {
	// The engine confines goals' shells with this executable as the sandbox helper.
	terminaltest.ServeSandboxExec()
	mcptest.ServeIfAsked() // the MCP server the extension tests start is this binary
	os.Exit(terminaltest.Run(m, "engine", nil))
}

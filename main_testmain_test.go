package main

import (
	"os"
	"testing"

	"github.com/clusterspace/clusterspace/backend/mcp/mcptest"
	"github.com/clusterspace/clusterspace/backend/terminal/terminaltest"
)

// TestMain gives every shell these tests start (in-process, or in the binary they run, which
// inherits the environment) a clean HOME.
func TestMain(m *testing.M) {
	mcptest.ServeIfAsked() // the MCP server e2e_extensions_test.go configures is this test binary
	cleanup := terminaltest.IsolateHome()
	code := m.Run()
	cleanup()
	os.Exit(code)
}

package tools_test

import (
	"os"
	"testing"

	"github.com/clusterspace/clusterspace/backend/terminal/terminaltest"
)

// TestMain gives the shells the terminal tool tests start a clean HOME.
func TestMain(m *testing.M) {
	cleanup := terminaltest.IsolateHome()
	code := m.Run()
	cleanup()
	os.Exit(code)
}

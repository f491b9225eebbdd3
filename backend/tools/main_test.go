package tools_test

import (
	"os"
	"testing"

	"github.com/clusterspace/clusterspace/backend/terminal/terminaltest"
)

// sshd is the real OpenSSH server the SSH pane tool test logs in to.
var sshd *terminaltest.SSHD

// TestMain gives the shells the terminal tool tests start a clean HOME, and starts sshd.
func TestMain(m *testing.M) {
	os.Exit(terminaltest.Run(m, "tools", &sshd))
}

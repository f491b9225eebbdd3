package tools_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/clusterspace/clusterspace/backend/terminal/terminaltest"
)

// sshd is the real OpenSSH server the SSH pane tool test logs in to.
var sshd *terminaltest.SSHD

// TestMain gives the shells the terminal tool tests start a clean HOME, and starts sshd.
func TestMain(m *testing.M) {
	cleanup := terminaltest.IsolateHome()
	var err error
	if sshd, err = terminaltest.StartSSHD("tools"); err != nil {
		fmt.Fprintln(os.Stderr, "tools tests:", err)
		cleanup()
		os.Exit(1)
	}
	code := m.Run()
	sshd.Close()
	cleanup()
	os.Exit(code)
}

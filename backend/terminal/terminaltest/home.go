// Package terminaltest helps tests that start real shells.
package terminaltest

import (
	"os"
	"path/filepath"
)

// IsolateHome points HOME at a fresh directory with an empty .bashrc for the rest of the
// test binary, and returns a function that removes it. Shells started by tests then read no
// user rc file: a slow or locked rc (pyenv waits up to 60 s on a stale rehash lock left by
// a shell killed mid-startup) must not decide whether tests pass.
func IsolateHome() (cleanup func()) {
	home, err := os.MkdirTemp("", "clusterspace-test-home-")
	if err != nil {
		panic("terminaltest: " + err.Error())
	}
	os.WriteFile(filepath.Join(home, ".bashrc"), []byte("# empty: tests run shells without user rc files\n"), 0o644)
	os.Setenv("HOME", home)
	return func() { os.RemoveAll(home) }
}

//go:build !linux

package terminal

import "syscall"

// Without /proc the session's members cannot be listed; the shell's process group is
// signalled as before.
func sessionMembers(int) []int { return nil }

func signalSession(int, syscall.Signal) {}

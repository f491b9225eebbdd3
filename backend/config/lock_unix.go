//go:build unix

package config

import (
	"errors"
	"os"
	"syscall"
)

// errLocked means another open file description holds the lock.
var errLocked = errors.New("locked")

// tryLock takes an exclusive flock on f without waiting. flock, not fcntl locks: an fcntl lock
// belongs to the process and is dropped when any of its descriptors for the file closes.
func tryLock(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return errLocked
	}
	return err
}

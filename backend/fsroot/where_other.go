//go:build !linux

package fsroot

import (
	"errors"
	"os"
)

// Where is the path the kernel reached for an open file; only Linux tells it (through
// /proc), elsewhere it is errors.ErrUnsupported and the caller keeps what it checked.
func Where(f *os.File) (string, error) { return "", errors.ErrUnsupported }

//go:build !unix

package config

import (
	"errors"
	"os"
)

var errLocked = errors.New("locked")

func tryLock(*os.File) error { return ErrLockUnsupported }

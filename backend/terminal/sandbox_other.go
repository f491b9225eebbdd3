//go:build !linux

package terminal

import "errors"

// LandlockSupport reports that Landlock exists only on Linux.
func LandlockSupport() (abi int, err error) {
	return 0, errors.Join(ErrNoLandlock, errors.New("Landlock is a Linux feature"))
}

func restrictSelf(Sandbox) error { return ErrNoLandlock }

func networkFilterSupport() error { return ErrNoLandlock }

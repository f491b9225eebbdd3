package fsroot

import (
	"fmt"
	"os"
)

// Where is the path the kernel reached for an open file: the file itself, whatever links
// its name went through and however they changed since it was opened.
func Where(f *os.File) (string, error) {
	sc, err := f.SyscallConn()
	if err != nil {
		return "", err
	}
	var path string
	var rerr error
	if err := sc.Control(func(fd uintptr) {
		path, rerr = os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd))
	}); err != nil {
		return "", err
	}
	return path, rerr
}

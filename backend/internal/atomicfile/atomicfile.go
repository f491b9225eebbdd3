// Package atomicfile replaces a small file whole: a reader sees the old content or the new,
// never half of either, and two writers never share a temporary file.
package atomicfile

import (
	"os"
	"path/filepath"
)

// Write replaces path with data: written to a new file beside it (same dir, so the rename
// stays on one file system), made perm before any byte is in it, then renamed over path.
func Write(path string, data []byte, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // Best effort: gone already after the rename.
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

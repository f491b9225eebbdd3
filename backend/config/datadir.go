// Package config resolves where ClusterSpace keeps its data and holds install-wide settings
// that are not per-workspace.
package config

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
)

// DataDirEnv names the environment variable that sets the data dir when no flag does.
const DataDirEnv = "CLUSTERSPACE_DATA_DIR"

// dataDirMode keeps the data dir private: it holds the database, the JWT secret and keys.
const dataDirMode = 0o700

// DataDirError is a data dir that cannot be used: a mistake in the configuration, which the
// doors report with exit status 64 (bad usage or configuration), not as a runtime failure.
type DataDirError struct{ msg string }

func (e *DataDirError) Error() string { return e.msg }

func dataDirErr(format string, args ...any) error {
	return &DataDirError{msg: fmt.Sprintf(format, args...)}
}

// ResolveDataDir picks the data dir: the flag, else $CLUSTERSPACE_DATA_DIR, else
// $XDG_DATA_HOME/clusterspace, else ~/.local/share/clusterspace. The result is absolute.
func ResolveDataDir(flagValue string) (string, error) {
	return resolveDir("data", flagValue, DataDirEnv, "XDG_DATA_HOME", filepath.Join(".local", "share"))
}

// EnsureDataDir creates dir (and parents) with mode 0700 if it does not exist, and refuses a
// path that exists but is not a directory, or one this process cannot write. An existing dir
// that others can read or enter is tightened to 0700, and log says so: it holds the database
// and the keys. Every refusal is a *DataDirError.
func EnsureDataDir(dir string, log *slog.Logger) error {
	info, err := os.Stat(dir)
	switch {
	case err == nil && !info.IsDir():
		return dataDirErr("data dir %q exists but is not a directory: pass another --data-dir", dir)
	case err == nil:
		if mode := info.Mode().Perm(); mode != dataDirMode {
			if err := os.Chmod(dir, dataDirMode); err != nil {
				return dataDirErr("data dir %q has mode %o and cannot be made private (0700): %v: fix its owner or pass another --data-dir", dir, mode, err)
			}
			log.Warn("made the data dir private: it holds the database and keys", "dir", dir, "was", fmt.Sprintf("%04o", mode), "now", fmt.Sprintf("%04o", dataDirMode))
		}
		return checkWritable(dir)
	case errors.Is(err, syscall.ENOTDIR):
		return dataDirErr("data dir %q cannot be created: part of its path is a file, not a directory: pass another --data-dir", dir)
	case !os.IsNotExist(err):
		return dataDirErr("data dir %q: %v", dir, err)
	}
	if err := os.MkdirAll(dir, dataDirMode); err != nil {
		return dataDirErr("cannot create data dir %q: %s does not let this process create it (%v): pass a writable --data-dir", dir, existingAncestor(dir), err)
	}
	// MkdirAll applies the umask; the data dir itself must be private whatever the umask is.
	if err := os.Chmod(dir, dataDirMode); err != nil {
		return dataDirErr("data dir %q cannot be made private (0700): %v", dir, err)
	}
	return checkWritable(dir)
}

// checkWritable creates and removes a file in dir: an unwritable data dir is named as such
// at the start, not as a puzzling failure of the first file the app writes there.
func checkWritable(dir string) error {
	f, err := os.CreateTemp(dir, ".write-check-*")
	if err != nil {
		return dataDirErr("data dir %q is not writable (%v): fix its permissions or pass a writable --data-dir", dir, err)
	}
	name := f.Name()
	f.Close()
	os.Remove(name) // Best effort: a leftover empty probe file harms nothing.
	return nil
}

// existingAncestor is the nearest directory above dir that exists, quoted, for a message.
func existingAncestor(dir string) string {
	for p := filepath.Dir(dir); ; p = filepath.Dir(p) {
		if _, err := os.Stat(p); err == nil || p == filepath.Dir(p) {
			return fmt.Sprintf("%q", p)
		}
	}
}

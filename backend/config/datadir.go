// Package config resolves where ClusterSpace keeps its data and holds install-wide settings
// that are not per-workspace.
package config

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
)

// DataDirEnv names the environment variable that sets the data dir when no flag does.
const DataDirEnv = "CLUSTERSPACE_DATA_DIR"

// dataDirMode keeps the data dir private: it holds the database, the JWT secret and keys.
const dataDirMode = 0o700

// ResolveDataDir picks the data dir: the flag, else $CLUSTERSPACE_DATA_DIR, else
// $XDG_DATA_HOME/clusterspace, else ~/.local/share/clusterspace. The result is absolute.
func ResolveDataDir(flagValue string) (string, error) {
	dir := flagValue
	if dir == "" {
		dir = os.Getenv(DataDirEnv)
	}
	if dir == "" {
		if xdg := os.Getenv("XDG_DATA_HOME"); xdg != "" {
			dir = filepath.Join(xdg, "clusterspace")
		} else {
			home, err := os.UserHomeDir()
			if err != nil {
				return "", fmt.Errorf("cannot find a home directory for the data dir (%v): pass --data-dir or set %s", err, DataDirEnv)
			}
			dir = filepath.Join(home, ".local", "share", "clusterspace")
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("data dir %q: %w", dir, err)
	}
	return abs, nil
}

// EnsureDataDir creates dir (and parents) with mode 0700 if it does not exist, and refuses a
// path that exists but is not a directory. An existing dir that others can read or enter is
// tightened to 0700, and log says so: it holds the database and the keys.
func EnsureDataDir(dir string, log *slog.Logger) error {
	info, err := os.Stat(dir)
	switch {
	case err == nil && !info.IsDir():
		return fmt.Errorf("data dir %q exists but is not a directory: pass another --data-dir", dir)
	case err == nil:
		if mode := info.Mode().Perm(); mode != dataDirMode {
			if err := os.Chmod(dir, dataDirMode); err != nil {
				return fmt.Errorf("data dir %q has mode %o and cannot be made private (0700): %w: fix its owner or pass another --data-dir", dir, mode, err)
			}
			log.Warn("made the data dir private: it holds the database and keys", "dir", dir, "was", fmt.Sprintf("%04o", mode), "now", fmt.Sprintf("%04o", dataDirMode))
		}
		return nil
	case !os.IsNotExist(err):
		return fmt.Errorf("data dir %q: %w", dir, err)
	}
	if err := os.MkdirAll(dir, dataDirMode); err != nil {
		return fmt.Errorf("cannot create data dir %q: %w: pass a writable --data-dir", dir, err)
	}
	// MkdirAll applies the umask; the data dir itself must be private whatever the umask is.
	return os.Chmod(dir, dataDirMode)
}

package config

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/clusterspace/clusterspace/backend/internal/atomicfile"
)

// A confined goal may read none of ClusterSpace's data dirs, not only the one of the app that
// runs it: each holds a database, keys and secrets. A data dir can be anywhere (--data-dir),
// so each one the app opens is remembered in a list of the user's, which the sandbox hides.

// knownDataDirsFile is that list: one absolute path a line, under the user's state dir.
func knownDataDirsFile() string {
	base := os.Getenv("XDG_STATE_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		base = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(base, "clusterspace", "data-dirs")
}

// maxKnownDataDirs bounds the list; the oldest entries drop off first (test runs open many).
const maxKnownDataDirs = 500

// RememberDataDir adds dir to the list of data dirs confined goals may not read.
func RememberDataDir(dir string) error {
	file := knownDataDirsFile()
	if file == "" {
		return nil // no home: nothing to remember in, and no other data dir to hide
	}
	known := KnownDataDirs()
	if slices.Contains(known, dir) {
		return nil
	}
	// Drop the ones that are gone, then the oldest past the bound.
	known = slices.DeleteFunc(known, func(d string) bool { _, err := os.Stat(d); return err != nil })
	known = append(known, dir)
	if len(known) > maxKnownDataDirs {
		known = known[len(known)-maxKnownDataDirs:]
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return err
	}
	// Whole or not at all, with a temporary file of its own: two processes may open data dirs
	// at once.
	return atomicfile.Write(file, []byte(strings.Join(known, "\n")+"\n"), 0o600)
}

// KnownDataDirs lists the data dirs the app has opened, plus the default one (which need not
// exist yet).
func KnownDataDirs() []string {
	var dirs []string
	if file := knownDataDirsFile(); file != "" {
		if f, err := os.Open(file); err == nil {
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				if d := strings.TrimSpace(sc.Text()); filepath.IsAbs(d) && !slices.Contains(dirs, d) {
					dirs = append(dirs, d)
				}
			}
			f.Close()
		}
	}
	// The default data dir under the person's home, whatever XDG_DATA_HOME says now.
	if home, err := os.UserHomeDir(); err == nil {
		if d := filepath.Join(home, ".local", "share", "clusterspace"); !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// Package worktreetest is for tests of work done beside a person's checkout (a goal's or a
// fleet task's own worktree, landing): what the checkout holds outside its .git, so a test can
// check it was left exactly as it was.
package worktreetest

import (
	"io/fs"
	"os"
	"path/filepath"
)

// Files is every file below dir, by its path relative to dir, with its contents; the .git
// directory (or any directory of that name) is passed over.
func Files(dir string) (map[string]string, error) {
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && d.Name() == ".git":
			return filepath.SkipDir
		case d.IsDir():
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		out[rel] = string(b)
		return nil
	})
	return out, err
}

package worktree

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The environment a piece of work runs with in its worktree: its shell, its check and its
// setup all get it.
const (
	// EnvPortBase and EnvPortCount name the work's range of ports (PORT is its first).
	EnvPortBase  = "CLUSTERSPACE_PORT_BASE"
	EnvPortCount = "CLUSTERSPACE_PORT_COUNT"
	// copiedFilesName lists, NUL-separated in the worktree's own git dir, the files copied
	// in from the person's checkout (`copy:`): the work's commit leaves them out.
	copiedFilesName = "clusterspace-copied-files"
	// scratchDirName holds the works' scratch dirs, next to their worktrees. Its leading dot
	// keeps it apart from every worktree (a task id starts with a letter or digit).
	scratchDirName = ".scratch"
)

// Env is the work's own environment: PORT and its range, and TMPDIR and XDG_CACHE_HOME in its
// scratch dir (the same layout a confined shell's scratch dir has, tmp/ and cache/).
func (wt Worktree) Env() []string {
	var env []string
	if wt.PortBase > 0 {
		env = append(env, "PORT="+strconv.Itoa(wt.PortBase), EnvPortBase+"="+strconv.Itoa(wt.PortBase), EnvPortCount+"="+strconv.Itoa(wt.PortCount))
	}
	if wt.Scratch != "" {
		tmp := filepath.Join(wt.Scratch, "tmp")
		env = append(env, "TMPDIR="+tmp, "TMP="+tmp, "TEMP="+tmp, "XDG_CACHE_HOME="+filepath.Join(wt.Scratch, "cache"))
	}
	return env
}

// ScratchDirOf is where the scratch dir of the worktree at dir goes: next to it, in the
// repository's git dir, so it goes away with the repository and git never sees it.
func ScratchDirOf(dir string) string {
	return filepath.Join(filepath.Dir(dir), scratchDirName, filepath.Base(dir))
}

// MakeScratch makes the work's scratch dir (and the tmp and cache dirs Env names), private
// to the user.
func (wt Worktree) MakeScratch() error {
	for _, d := range []string{"tmp", "cache"} {
		if err := os.MkdirAll(filepath.Join(wt.Scratch, d), 0o700); err != nil {
			return fmt.Errorf("cannot make the task's scratch dir %s (%v): free some space or fix its permissions", wt.Scratch, err)
		}
	}
	return nil
}

// RemoveScratch removes the work's scratch dir, and the dir of scratch dirs once empty.
func (wt Worktree) RemoveScratch() error {
	if wt.Scratch == "" {
		return nil
	}
	if err := os.RemoveAll(wt.Scratch); err != nil {
		// Some tools leave read-only trees in their caches: make them writable, then again.
		filepath.WalkDir(wt.Scratch, func(path string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				os.Chmod(path, 0o700) // Best effort: RemoveAll below says what is left.
			}
			return nil
		})
		if err := os.RemoveAll(wt.Scratch); err != nil {
			return fmt.Errorf("cannot remove the scratch dir %s (%v): remove it by hand", wt.Scratch, err)
		}
	}
	os.Remove(filepath.Dir(wt.Scratch)) // Best effort: other works' scratch dirs may still be there.
	return nil
}

// CheckCopyPath checks one entry of a fleet file's `copy:`: a path relative to the
// repository's top-level dir, inside it, without control characters; it returns it cleaned.
func CheckCopyPath(p string) (string, error) {
	if strings.TrimSpace(p) == "" {
		return "", fmt.Errorf("an entry is empty: list paths of untracked files relative to the repository, such as .env")
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f {
			return "", fmt.Errorf("%q has a control character: name the file by its plain path", p)
		}
	}
	if filepath.IsAbs(p) {
		return "", fmt.Errorf("%q is absolute: give a path relative to the repository's top-level dir, such as .env", p)
	}
	for _, part := range strings.Split(filepath.ToSlash(p), "/") {
		if part == ".." {
			return "", fmt.Errorf("%q leaves the repository (..): only files inside it are copied", p)
		}
	}
	clean := filepath.Clean(p)
	if clean == "." {
		return "", fmt.Errorf("%q is the repository itself: name the untracked files or dirs to copy", p)
	}
	if first, _, _ := strings.Cut(filepath.ToSlash(clean), "/"); first == ".git" {
		return "", fmt.Errorf("%q is inside .git: git's own files are not copied", p)
	}
	return clean, nil
}

// CopyIn copies each path (relative to the repository's top-level dir, checked with
// CheckCopyPath) from the person's checkout at from into the worktree, at the same place,
// unless the worktree has it already (a resumed task keeps its own copy). The copies are
// recorded so the work's commit leaves them out. A path missing from the checkout is an
// error naming it.
func (wt *Worktree) CopyIn(ctx context.Context, from string, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	gitDir, err := worktreeGitDir(ctx, wt.Dir)
	if err != nil {
		return err
	}
	copied := readList(filepath.Join(gitDir, copiedFilesName))
	for _, p := range paths {
		clean, err := CheckCopyPath(p)
		if err != nil {
			return fmt.Errorf("copy: %v", err)
		}
		dst := filepath.Join(wt.Dir, clean)
		if _, err := os.Lstat(dst); err == nil {
			continue
		}
		src := filepath.Join(from, clean)
		if _, err := os.Stat(src); err != nil {
			return fmt.Errorf("copy: %s is not in the checkout at %s (%v): create it there, or take it out of the fleet file's copy:", clean, from, err)
		}
		if err := insideDir(wt.Dir, filepath.Dir(dst)); err != nil {
			return fmt.Errorf("copy: %s: %v", clean, err)
		}
		if err := copyTree(src, dst); err != nil {
			return fmt.Errorf("copy: %s could not be copied into the worktree: %v", clean, err)
		}
		copied = append(copied, filepath.ToSlash(clean))
	}
	if err := os.WriteFile(filepath.Join(gitDir, copiedFilesName), []byte(strings.Join(copied, "\x00")), 0o644); err != nil {
		return fmt.Errorf("copy: cannot record the files copied into the worktree: %v", err)
	}
	return nil
}

// insideDir checks that dir, once its existing part's symlinks are resolved, is inside root:
// a tracked symlink must not carry a copy out of the worktree.
func insideDir(root, dir string) error {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return err
	}
	existing := dir
	for {
		if _, err := os.Lstat(existing); err == nil {
			break
		}
		parent := filepath.Dir(existing)
		if parent == existing {
			break
		}
		existing = parent
	}
	real, err := filepath.EvalSymlinks(existing)
	if err != nil {
		return err
	}
	if rel, err := filepath.Rel(realRoot, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fmt.Errorf("its dir in the worktree leads out of it (through a symlink to %s); rename the symlink or take the path out of copy:", real)
	}
	return nil
}

// copyTree copies a file, a symlink or a dir with everything in it, keeping modes.
func copyTree(src, dst string) error {
	// A listed path that is itself a symlink (.env -> ../secrets/.env) is copied as what it
	// points to: a relative link would lead nowhere from the worktree.
	if real, err := filepath.EvalSymlinks(src); err == nil {
		src = real
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		case d.IsDir():
			return os.MkdirAll(to, info.Mode().Perm()|0o700)
		case d.Type().IsRegular():
			return copyFile(path, to, info.Mode().Perm())
		}
		return fmt.Errorf("%s is neither a file, a dir nor a symlink", path)
	})
}

func copyFile(src, dst string, mode fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// readList reads a NUL-separated list of paths (none when the file is not there).
func readList(path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var out []string
	for _, p := range strings.Split(string(b), "\x00") {
		if p = strings.TrimSuffix(p, "/"); p != "" {
			out = append(out, p)
		}
	}
	return out
}

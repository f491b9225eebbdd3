// Package fsroot opens the files tools write or read on a model's behalf, so that the file
// touched is the one the policy judged. Beneath the caller's dir (a goal's sandbox or work
// dir) a path is opened through os.Root: a symbolic link or ".." that leads out of the dir is
// refused at the moment of opening, however the path looked when it was checked (the
// equivalent of openat2's RESOLVE_BENEATH). Elsewhere (an unconfined caller's absolute path)
// the last component is never a link that is followed.
package fsroot

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// EscapeError is a path inside a dir by its name that leads outside it when opened: through
// a symbolic link (planted, or swapped in after the path was checked) or a "..".
type EscapeError struct {
	Path, Dir string
}

func (e *EscapeError) Error() string {
	return fmt.Sprintf("%s leads outside the sandbox %s (through a symbolic link or \"..\"), so it was not opened: "+
		"use a path whose every part is a real file or folder inside the sandbox", e.Path, e.Dir)
}

// LinkError is a path outside any sandbox whose last component is a symbolic link: a file is
// written or read only where its path names it, never where a link points.
type LinkError struct {
	Path string
}

func (e *LinkError) Error() string {
	return fmt.Sprintf("%s is a symbolic link, which is not followed: give the path of the file it points to", e.Path)
}

// Beneath reports whether path (absolute, clean) lies inside dir by its name, and its path
// relative to dir. dir "" contains nothing.
func Beneath(dir, path string) (string, bool) {
	if dir == "" || !filepath.IsAbs(path) {
		return "", false
	}
	rel, err := filepath.Rel(filepath.Clean(dir), filepath.Clean(path))
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return rel, true
}

// Create opens path for writing, truncated, creating it (mode 0600) and its missing parent
// folders (0700). When path lies inside dir it is opened beneath dir (see the package doc);
// otherwise it must not be a symbolic link. It never blocks on a FIFO planted at path.
func Create(dir, path string) (*os.File, error) {
	return open(dir, path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, true)
}

// Open opens path for reading, which must be a regular file: beneath dir when it lies inside
// it, else not through a symbolic link at its last component. A FIFO or device planted at path
// is refused without blocking.
func Open(dir, path string) (*os.File, error) {
	f, err := open(dir, path, os.O_RDONLY, false)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	switch {
	case info.IsDir():
		f.Close()
		return nil, fmt.Errorf("%s is a folder, not a file: give the path of a file in it", path)
	case !info.Mode().IsRegular():
		f.Close()
		return nil, fmt.Errorf("%s is not a regular file (%s): give the path of an ordinary file", path, info.Mode().Type())
	}
	return f, nil
}

// open opens path with flag; O_NONBLOCK keeps a FIFO from blocking the open (it changes
// nothing for a regular file), O_NOFOLLOW keeps the last component from being a link.
func open(dir, path string, flag int, mkdirs bool) (*os.File, error) {
	if !filepath.IsAbs(path) {
		return nil, fmt.Errorf("%q is not an absolute path", path)
	}
	flag |= syscall.O_NONBLOCK
	rel, ok := Beneath(dir, path)
	if !ok {
		if mkdirs {
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				return nil, fmt.Errorf("cannot create the folder for %s: %w", path, err)
			}
		}
		f, err := os.OpenFile(path, flag|syscall.O_NOFOLLOW, 0o600)
		if errors.Is(err, syscall.ELOOP) {
			return nil, &LinkError{Path: path}
		}
		return f, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("the sandbox %s cannot be opened: %w", dir, err)
	}
	defer root.Close()
	if parent := filepath.Dir(rel); mkdirs && parent != "." {
		if err := root.MkdirAll(parent, 0o700); err != nil {
			if escapes(err) {
				return nil, &EscapeError{Path: path, Dir: dir}
			}
			return nil, fmt.Errorf("cannot create the folder for %s: %w", path, err)
		}
	}
	f, err := root.OpenFile(rel, flag, 0o600)
	switch {
	case escapes(err):
		return nil, &EscapeError{Path: path, Dir: dir}
	case err != nil:
		var pe *fs.PathError
		if errors.As(err, &pe) {
			// Name the path as the caller gave it, not relative to the root.
			return nil, &fs.PathError{Op: "open", Path: path, Err: pe.Err}
		}
		return nil, err
	}
	return f, nil
}

// escapes reports whether os.Root refused a path for leading outside it. os does not export
// that error (os.ErrPathEscapes exists only in its own tests), so its text is matched; the
// package's tests fail if a Go release changes it.
func escapes(err error) bool {
	for ; err != nil; err = errors.Unwrap(err) {
		if err.Error() == "path escapes from parent" {
			return true
		}
	}
	return false
}

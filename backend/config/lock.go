package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// LockFileName is the lock file inside the data dir: whoever holds its flock owns the dir.
const LockFileName = "lock"

// lockFileMode keeps the owner's PID and command to the user, like everything in the data dir.
const lockFileMode = 0o600

// readerHandoverWait is how long a writer waits for a read-only command (goal list, goal show)
// that holds the lock while it reads: such a command holds it for well under a second, and a
// `serve` started by a script right after a `goal list` should not fail for it.
const readerHandoverWait = 5 * time.Second

// lockPoll is how often a writer waiting for a read-only command retries the lock.
const lockPoll = 50 * time.Millisecond

// ErrDataDirInUse means another process owns the data dir. The error that wraps it names it.
var ErrDataDirInUse = errors.New("the data dir is in use")

// ErrLockUnsupported means this platform has no flock: the data dir cannot be guarded.
var ErrLockUnsupported = errors.New("data dir locking is not supported on this platform")

// LockOwner is what the lock file says about the process holding it.
type LockOwner struct {
	PID     int       `json:"pid"`
	Command string    `json:"command"`
	Since   time.Time `json:"since"`
	// ReadOnly marks a read-only command that holds the lock only while it reads.
	ReadOnly bool `json:"readOnly,omitempty"`
}

// InUseError says who owns the data dir, and what to do.
type InUseError struct {
	Dir   string
	Owner LockOwner // zero if the owner had not yet written its name
}

func (e *InUseError) Error() string {
	if e.Owner.PID == 0 {
		return fmt.Sprintf("the data dir %s is in use by another ClusterSpace process; stop it or use another --data-dir", e.Dir)
	}
	return fmt.Sprintf("the data dir %s is in use by PID %d (%s since %s); stop it or use another --data-dir",
		e.Dir, e.Owner.PID, e.Owner.Command, e.Owner.Since.Local().Format("2006-01-02 15:04:05"))
}

func (e *InUseError) Unwrap() error { return ErrDataDirInUse }

// DataDirLock is a held lock on a data dir. The kernel drops it when the process exits, even
// on SIGKILL, so a crash never leaves the data dir locked.
type DataDirLock struct {
	f *os.File
}

// LockDataDir makes this process the one owner of dir, recording command (such as "serve" or
// "goal run") in the lock file. If another process owns it the error is an *InUseError
// (errors.Is ErrDataDirInUse) naming that process. A writer waits a moment for a read-only
// command that is just reading.
func LockDataDir(dir, command string, readOnly bool) (*DataDirLock, error) {
	path := filepath.Join(dir, LockFileName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, lockFileMode)
	if err != nil {
		return nil, fmt.Errorf("open the data dir's lock file %q: %w", path, err)
	}
	deadline := time.Now().Add(readerHandoverWait)
	for {
		err = tryLock(f)
		if err == nil {
			break
		}
		if !errors.Is(err, errLocked) {
			f.Close()
			return nil, fmt.Errorf("lock the data dir %s: %w", dir, err)
		}
		owner := readOwner(path)
		// An owner with no name yet is a process between taking the lock and writing it.
		waitable := owner.ReadOnly || owner.PID == 0
		if readOnly || !waitable || time.Now().After(deadline) {
			f.Close()
			return nil, &InUseError{Dir: dir, Owner: owner}
		}
		time.Sleep(lockPoll)
	}
	// Best effort: a lock file the user loosened is tightened; the lock itself is what counts.
	_ = f.Chmod(lockFileMode)
	b, _ := json.Marshal(LockOwner{PID: os.Getpid(), Command: command, Since: time.Now().UTC(), ReadOnly: readOnly})
	if err := f.Truncate(0); err == nil {
		_, err = f.WriteAt(append(b, '\n'), 0)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("write the data dir's lock file %q: %w", path, err)
	}
	return &DataDirLock{f: f}, nil
}

// readOwner reads who holds the lock. The owner writes its name right after taking the lock,
// so an empty file is retried briefly before giving up on the name.
func readOwner(path string) LockOwner {
	var o LockOwner
	for range 10 {
		b, err := os.ReadFile(path)
		if err == nil && json.Unmarshal(b, &o) == nil && o.PID != 0 {
			return o
		}
		time.Sleep(20 * time.Millisecond)
	}
	return LockOwner{}
}

// Release gives the data dir up. The lock file stays, with its last owner's name (the next
// owner overwrites it): removing it would let a third process lock a new file while a second
// still holds the old one.
func (l *DataDirLock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close() // closing drops the flock
	l.f = nil
	return err
}

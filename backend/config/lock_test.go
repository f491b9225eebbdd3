//go:build unix

package config

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// flock locks belong to an open file description, so two LockDataDir calls in one process
// contend just as two processes do.
func TestLockDataDirHasOneOwner(t *testing.T) {
	dir := t.TempDir()
	first, err := LockDataDir(dir, "serve", false)
	if err != nil {
		t.Fatal(err)
	}
	_, err = LockDataDir(dir, "goal run", false)
	var inUse *InUseError
	if !errors.As(err, &inUse) || !errors.Is(err, ErrDataDirInUse) {
		t.Fatalf("second writer: %v, want an InUseError", err)
	}
	want := "the data dir " + dir + " is in use by PID " + strconv.Itoa(os.Getpid()) + " (serve since " + time.Now().Format("2006-01-02")
	if !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), "; stop it or use another --data-dir") {
		t.Fatalf("message %q\nwant it to start %q", err, want)
	}
	if _, err := LockDataDir(dir, "goal list", true); !errors.Is(err, ErrDataDirInUse) {
		t.Fatalf("a reader took an owned lock: %v", err)
	}
	info, err := os.Stat(filepath.Join(dir, LockFileName))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("lock file: %v, %v", info, err)
	}
	if err := first.Release(); err != nil {
		t.Fatal(err)
	}
	second, err := LockDataDir(dir, "goal run", false)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	second.Release()
}

// A writer waits for a read-only command that holds the lock only while it reads.
func TestLockDataDirWriterWaitsForAReader(t *testing.T) {
	dir := t.TempDir()
	reader, err := LockDataDir(dir, "goal list", true)
	if err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(200*time.Millisecond, func() { reader.Release() })
	start := time.Now()
	w, err := LockDataDir(dir, "serve", false)
	if err != nil {
		t.Fatalf("the writer did not wait for the reader: %v", err)
	}
	defer w.Release()
	if time.Since(start) < 150*time.Millisecond {
		t.Fatal("the writer got the lock while the reader held it")
	}
}

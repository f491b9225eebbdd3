//go:build unix

// The data dir tests read unix file modes and flock locks.

package config

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestResolveDataDirPrecedence(t *testing.T) {
	base := t.TempDir()
	t.Setenv("XDG_DATA_HOME", filepath.Join(base, "xdg"))
	t.Setenv(DataDirEnv, "")
	t.Setenv("HOME", filepath.Join(base, "home"))

	got, err := ResolveDataDir("")
	if err != nil || got != filepath.Join(base, "xdg", "clusterspace") {
		t.Fatalf("XDG: got %q, %v", got, err)
	}
	t.Setenv("XDG_DATA_HOME", "")
	got, _ = ResolveDataDir("")
	if got != filepath.Join(base, "home", ".local", "share", "clusterspace") {
		t.Fatalf("HOME fallback: got %q", got)
	}
	t.Setenv(DataDirEnv, filepath.Join(base, "env"))
	got, _ = ResolveDataDir("")
	if got != filepath.Join(base, "env") {
		t.Fatalf("env: got %q", got)
	}
	got, _ = ResolveDataDir(filepath.Join(base, "flag"))
	if got != filepath.Join(base, "flag") {
		t.Fatalf("flag: got %q", got)
	}
}

func TestEnsureDataDirIsPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "data")
	if err := EnsureDataDir(dir, slog.Default()); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if mode := info.Mode().Perm(); mode != 0o700 {
		t.Fatalf("mode %o, want 700", mode)
	}
	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, nil, 0o600)
	if err := EnsureDataDir(file, slog.Default()); err == nil {
		t.Fatal("a file was accepted as data dir")
	}
}

func TestEnsureDataDirTightensALooseDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	if err := EnsureDataDir(dir, slog.New(slog.NewTextHandler(&log, nil))); err != nil {
		t.Fatal(err)
	}
	info, _ := os.Stat(dir)
	if mode := info.Mode().Perm(); mode != 0o700 {
		t.Fatalf("mode %o, want 700", mode)
	}
	if !strings.Contains(log.String(), "made the data dir private") || !strings.Contains(log.String(), "was=0755") {
		t.Fatalf("the log does not say the mode changed: %q", log.String())
	}
}

func TestResolveConfigDirOrder(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv(ConfigDirEnv, "")
	t.Setenv("XDG_CONFIG_HOME", "")
	cases := []struct {
		name, flag, env, xdg, want string
	}{
		{"home default", "", "", "", filepath.Join(home, ".config", "clusterspace")},
		{"xdg", "", "", "/x/cfg", "/x/cfg/clusterspace"},
		{"env over xdg", "", "/e/cs", "/x/cfg", "/e/cs"},
		{"flag over all", "/f/cs", "/e/cs", "/x/cfg", "/f/cs"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(ConfigDirEnv, c.env)
			t.Setenv("XDG_CONFIG_HOME", c.xdg)
			got, err := ResolveConfigDir(c.flag)
			if err != nil || got != c.want {
				t.Fatalf("ResolveConfigDir(%q) = %q, %v; want %q", c.flag, got, err, c.want)
			}
		})
	}
	rel, err := ResolveConfigDir("rel/dir")
	if err != nil || !filepath.IsAbs(rel) {
		t.Fatalf("a relative flag should come back absolute, got %q, %v", rel, err)
	}
}

func TestKeyFileIsCreatedOnceAndKeptPrivate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k.key")
	a, err := LoadOrCreateKeyFile(path, 32)
	if err != nil || len(a) != 32 {
		t.Fatalf("create: %v", err)
	}
	os.Chmod(path, 0o644)
	b, err := LoadOrCreateKeyFile(path, 32)
	if err != nil || string(a) != string(b) {
		t.Fatal("a second load gave another key")
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o600 {
		t.Fatalf("mode %o after load", info.Mode().Perm())
	}
	os.WriteFile(path, []byte("not hex\n"), 0o600)
	if _, err := LoadOrCreateKeyFile(path, 32); !errors.Is(err, ErrDamagedKeyFile) {
		t.Fatalf("damaged: %v", err)
	}
}

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

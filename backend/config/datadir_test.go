package config

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
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

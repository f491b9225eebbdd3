package config

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

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

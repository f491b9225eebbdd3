package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

// A new file is made and an old one replaced, each with the new content and mode, and no
// temporary file is left beside it; a dir that is not there is an error, not a panic.
func TestWriteReplacesTheFileWhole(t *testing.T) {
	t.Parallel()
	for name, old := range map[string][]byte{"a new file": nil, "an existing file": []byte("old, longer content")} {
		dir := t.TempDir()
		path := filepath.Join(dir, "list.json")
		if old != nil {
			if err := os.WriteFile(path, old, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := Write(path, []byte("new"), 0o600); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if b, err := os.ReadFile(path); err != nil || string(b) != "new" {
			t.Errorf("%s: content %q, %v; want new", name, b, err)
		}
		if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, %v; want 0600", name, info, err)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 1 {
			t.Errorf("%s: the dir holds %d files, want only list.json", name, len(entries))
		}
	}
	if err := Write(filepath.Join(t.TempDir(), "no-such-dir", "x"), []byte("x"), 0o600); err == nil {
		t.Fatal("a write into a missing dir succeeded")
	}
}

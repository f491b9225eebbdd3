package worktreetest

import (
	"maps"
	"os"
	"path/filepath"
	"testing"
)

// Files at any depth are read by their relative path; what is under .git is not; a dir that
// is not there is an error.
func TestFilesPassesOverGit(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{"README": "hello\n", "a/b/c.txt": "deep", ".git/HEAD": "ref: main", "sub/.git/x": "y"} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Files(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"README": "hello\n", filepath.Join("a", "b", "c.txt"): "deep"}; !maps.Equal(got, want) {
		t.Errorf("read %v, want %v", got, want)
	}
	if _, err := Files(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing dir read without an error")
	}
}

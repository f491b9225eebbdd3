//go:build unix

package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// umaskEnv makes the test binary open a store under that umask (octal) and exit (see
// TestMain). The umask is the whole process's, so it is set in a child process, never in the
// one running the tests.
const umaskEnv = "STORE_TEST_UMASK"

func TestMain(m *testing.M) {
	if os.Getenv(umaskEnv) != "" {
		os.Exit(openUnderUmask())
	}
	os.Exit(m.Run())
}

// TestFileModesWhateverTheUmask opens a new database, and one whose files were left 0644,
// under umask 000 and 022: the database, -wal and -shm are 0600 either way.
func TestFileModesWhateverTheUmask(t *testing.T) {
	t.Parallel()
	for _, umask := range []string{"000", "022"} {
		for _, existing := range []bool{false, true} {
			path := filepath.Join(t.TempDir(), FileName)
			if existing {
				s, err := Open(context.Background(), path)
				if err != nil {
					t.Fatal(err)
				}
				s.Close()
				os.Chmod(path, 0o644)
			}
			cmd := exec.Command(os.Args[0])
			cmd.Env = append(os.Environ(), umaskEnv+"="+umask, "STORE_TEST_PATH="+path)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("umask %s, existing %v: %v\n%s", umask, existing, err, out)
			}
		}
	}
}

// openUnderUmask is the child's side of TestFileModesWhateverTheUmask: it opens the store at
// STORE_TEST_PATH under the umask in STORE_TEST_UMASK, writes, and checks the files' modes.
// It returns the process's exit code, saying what is wrong on stderr.
func openUnderUmask() int {
	path := os.Getenv("STORE_TEST_PATH")
	m, err := strconv.ParseUint(os.Getenv(umaskEnv), 8, 32)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bad umask:", err)
		return 2
	}
	syscall.Umask(int(m))
	s, err := Open(context.Background(), path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer s.Close()
	// A write makes sure the WAL and its index exist while the files are looked at.
	if err := s.SetSetting(context.Background(), "k", "v"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := 0
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		info, err := os.Stat(p)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if mode := info.Mode().Perm(); mode != 0o600 {
			fmt.Fprintf(os.Stderr, "%s: mode %o, want 600\n", filepath.Base(p), mode)
			code = 1
		}
	}
	return code
}

// OpenReadOnly reads what a writer wrote and can write nothing itself.
func TestOpenReadOnlyWritesNothing(t *testing.T) {
	t.Parallel()
	s, path := openTemp(t)
	ctx := context.Background()
	if err := s.SetSetting(ctx, "k", "v"); err != nil {
		t.Fatal(err)
	}
	ro, err := OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if v, err := ro.Version(ctx); err != nil || v != SchemaVersion() {
		t.Fatalf("version %d, %v", v, err)
	}
	if v, ok, err := ro.Setting(ctx, "k"); err != nil || !ok || v != "v" {
		t.Fatalf("read back %q %v %v", v, ok, err)
	}
	if err := ro.SetSetting(ctx, "k", "w"); err == nil {
		t.Fatal("a read-only store wrote a setting")
	}
	if _, err := OpenReadOnly(ctx, filepath.Join(t.TempDir(), FileName)); !errors.Is(err, ErrNoDatabase) {
		t.Fatalf("missing database: %v", err)
	}
}

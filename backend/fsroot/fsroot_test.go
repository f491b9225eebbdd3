package fsroot_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/clusterspace/clusterspace/backend/fsroot"
)

// sandbox is a dir with a file in it, and a victim file outside it.
func sandbox(t *testing.T) (dir, victim string) {
	t.Helper()
	dir, outside := t.TempDir(), t.TempDir()
	victim = filepath.Join(outside, "victim")
	if err := os.WriteFile(victim, []byte("precious"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("notes"), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, victim
}

func untouched(t *testing.T, victim string) {
	t.Helper()
	if data, err := os.ReadFile(victim); err != nil || string(data) != "precious" {
		t.Fatalf("the file outside was changed: %q %v", data, err)
	}
}

// Every way a name inside the sandbox can lead out of it is refused at the open, for writing
// and for reading, and says so.
func TestCreateAndOpenStayBeneathTheDir(t *testing.T) {
	t.Parallel()
	dir, victim := sandbox(t)
	outsideDir := filepath.Dir(victim)
	must(t, os.Symlink(victim, filepath.Join(dir, "abs.html")))
	must(t, os.Symlink("../"+filepath.Base(outsideDir)+"/victim", filepath.Join(dir, "rel.html")))
	must(t, os.Symlink(outsideDir, filepath.Join(dir, "out")))
	must(t, os.Symlink(filepath.Join(outsideDir, "new"), filepath.Join(dir, "dangling.html")))
	for _, name := range []string{"abs.html", "rel.html", "out/victim", "dangling.html", "out/sub/new.html"} {
		path := filepath.Join(dir, name)
		f, err := fsroot.Create(dir, path)
		var escape *fsroot.EscapeError
		if err == nil {
			f.Close()
		}
		if !errors.As(err, &escape) || !strings.Contains(err.Error(), path+" leads outside the sandbox "+dir) {
			t.Errorf("Create %s: %v, want an EscapeError", name, err)
		}
		if f, err := fsroot.Open(dir, path); err == nil || (name != "dangling.html" && !errors.As(err, &escape)) {
			if f != nil {
				f.Close()
			}
			t.Errorf("Open %s: %v, want it refused", name, err)
		}
	}
	untouched(t, victim)
	for _, leaked := range []string{"new", "sub"} {
		if _, err := os.Lstat(filepath.Join(outsideDir, leaked)); err == nil {
			t.Errorf("%s was created outside the sandbox", leaked)
		}
	}
}

// Inside the sandbox things work as before: a new file and its folders are made, an existing
// one is replaced, a link that stays inside is followed.
func TestCreateAndOpenInsideTheDir(t *testing.T) {
	t.Parallel()
	dir, _ := sandbox(t)
	write(t, dir, filepath.Join(dir, "a", "b", "page.html"), "one")
	write(t, dir, filepath.Join(dir, "a", "b", "page.html"), "two")
	if got := read(t, dir, filepath.Join(dir, "a", "b", "page.html")); got != "two" {
		t.Fatalf("read back %q", got)
	}
	must(t, os.Symlink("a/b/page.html", filepath.Join(dir, "inner.html")))
	if got := read(t, dir, filepath.Join(dir, "inner.html")); got != "two" {
		t.Fatalf("through an inside link: %q", got)
	}
	if info, err := os.Stat(filepath.Join(dir, "a", "b", "page.html")); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("mode: %v %v", info, err)
	}
	if _, err := fsroot.Open(dir, filepath.Join(dir, "a")); err == nil || !strings.Contains(err.Error(), "is a folder") {
		t.Errorf("a folder: %v", err)
	}
	if _, err := fsroot.Open(dir, filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
	// A FIFO planted where a file is expected neither blocks the open nor is read.
	fifo := filepath.Join(dir, "fifo")
	must(t, syscall.Mkfifo(fifo, 0o600))
	if _, err := fsroot.Open(dir, fifo); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("fifo read: %v", err)
	}
	if _, err := fsroot.Create(dir, fifo); err == nil {
		t.Error("a FIFO with no reader was opened for writing")
	}
}

// Outside any sandbox (no dir, or a path elsewhere) a link at the last component is never
// followed.
func TestUnconfinedPathIsNotFollowedThroughALink(t *testing.T) {
	t.Parallel()
	dir, victim := sandbox(t)
	link := filepath.Join(t.TempDir(), "out.pdf")
	must(t, os.Symlink(victim, link))
	for _, d := range []string{"", dir} {
		var le *fsroot.LinkError
		if _, err := fsroot.Create(d, link); !errors.As(err, &le) || !strings.Contains(err.Error(), "is a symbolic link, which is not followed") {
			t.Errorf("Create with dir %q: %v", d, err)
		}
		if _, err := fsroot.Open(d, link); !errors.As(err, &le) {
			t.Errorf("Open with dir %q: %v", d, err)
		}
	}
	untouched(t, victim)
	plain := filepath.Join(t.TempDir(), "new", "x.pdf")
	write(t, "", plain, "pdf")
	if got := read(t, "", plain); got != "pdf" {
		t.Fatalf("unconfined: %q", got)
	}
}

// Where names the file that was opened, not the link it was opened through.
func TestWhereIsTheOpenedFile(t *testing.T) {
	t.Parallel()
	dir, _ := sandbox(t)
	must(t, os.Symlink("notes.txt", filepath.Join(dir, "link")))
	f, err := fsroot.Open(dir, filepath.Join(dir, "link"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := fsroot.Where(f)
	real, _ := filepath.EvalSymlinks(filepath.Join(dir, "notes.txt"))
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skip("Where is Linux-only")
	}
	if err != nil || got != real {
		t.Fatalf("Where = %q, %v; want %q", got, err, real)
	}
}

func TestBeneath(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		dir, path, rel string
		ok             bool
	}{
		{"/s", "/s/a/b", "a/b", true},
		{"/s", "/s", ".", true},
		{"/s/", "/s/a/../b", "b", true},
		{"/s", "/s/../x", "", false},
		{"/s", "/sx/a", "", false},
		{"", "/s/a", "", false},
		{"/s", "a", "", false},
	} {
		if rel, ok := fsroot.Beneath(c.dir, c.path); rel != c.rel || ok != c.ok {
			t.Errorf("Beneath(%q, %q) = %q, %v", c.dir, c.path, rel, ok)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, dir, path, text string) {
	t.Helper()
	f, err := fsroot.Create(dir, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
	must(t, f.Close())
}

func read(t *testing.T, dir, path string) string {
	t.Helper()
	f, err := fsroot.Open(dir, path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b strings.Builder
	buf := make([]byte, 64)
	for {
		n, err := f.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return b.String()
}

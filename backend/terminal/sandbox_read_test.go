package terminal_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/terminal"
)

// writeFile creates path (and its parents) holding text.
func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestConfinedShellCannotReadTheDataDir(t *testing.T) {
	t.Parallel()
	m := newManager(t, terminal.Options{})
	// A home-like tree: the data dir where the app keeps it by default, the sandbox beside it.
	home := t.TempDir()
	data := filepath.Join(home, ".local", "share", "clusterspace")
	for _, f := range []string{"secrets.key", "jwt.key", "clusterspace.db"} {
		writeFile(t, filepath.Join(data, f), "TOPSECRET-"+f+"\n")
	}
	writeFile(t, filepath.Join(home, "notes.txt"), "notes-visible\n")
	work := filepath.Join(home, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(data, filepath.Join(home, "link-to-data")); err != nil {
		t.Fatal(err)
	}
	// The keyrings of the app's user are hidden without being named.
	appHome, _ := os.UserHomeDir()
	keyring := filepath.Join(appHome, ".local", "share", "keyrings", "login.keyring")
	writeFile(t, keyring, "TOPSECRET-keyring\n")

	probe := strings.Join([]string{
		"cat " + filepath.Join(data, "secrets.key") + " || echo secrets-$((1+1))-denied",
		"cat " + filepath.Join(data, "jwt.key") + " || echo jwt-$((2+2))-denied",
		"cat " + filepath.Join(data, "clusterspace.db") + " || echo db-$((3+3))-denied",
		"ls " + data + " || echo ls-$((4+4))-denied",
		"cat " + filepath.Join(home, "link-to-data", "secrets.key") + " || echo link-$((5+5))-denied",
		"cat " + keyring + " || echo keyring-$((6+6))-denied",
	}, "; ")

	// Control: an unconfined shell reads all of it, so a refusal below is the sandbox's.
	free := openBash(t, m, bashSpec(t, "pane-da7a00000000"))
	run(t, m, free.PaneID, "", probe)
	if text, _ := m.Tail(free.PaneID, "", 20); !strings.Contains(text, "TOPSECRET-secrets.key") || regexp.MustCompile(`-\d+-denied`).MatchString(text) {
		t.Fatalf("the unconfined shell could not read the data dir:\n%s", text)
	}

	spec := bashSpec(t, "pane-da7a00000001")
	spec.Dir = work
	spec.Sandbox = &terminal.Sandbox{WritableDirs: []string{work}, HiddenDirs: []string{data}}
	tab := openBash(t, m, spec)
	run(t, m, tab.PaneID, "", probe)
	run(t, m, tab.PaneID, "", "ls /usr/bin >/dev/null && cat /etc/hostname >/dev/null && cat "+filepath.Join(home, "notes.txt"))
	run(t, m, tab.PaneID, "", "echo hi > f && cat f >/dev/null && mkdir -p d && git --version >/dev/null && /usr/bin/python3 -c 'print(6*7)' && echo work-$((8+8))-ok")
	text, _ := m.Tail(tab.PaneID, "", 60)
	for _, want := range []string{"secrets-2-denied", "jwt-4-denied", "db-6-denied", "ls-8-denied", "link-10-denied",
		"keyring-12-denied", "Permission denied", "notes-visible", "42\nwork-16-ok"} {
		if !strings.Contains(text, want) {
			t.Errorf("confined shell output lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "TOPSECRET") {
		t.Errorf("the confined shell read a secret:\n%s", text)
	}
}

func TestSandboxRefusesToContainTheDataDir(t *testing.T) {
	t.Parallel()
	m := newManager(t, terminal.Options{})
	spec := bashSpec(t, "pane-da7a00000002")
	data := filepath.Join(spec.Dir, "data")
	spec.Sandbox = &terminal.Sandbox{WritableDirs: []string{spec.Dir}, HiddenDirs: []string{data}}
	if _, err := m.Open(t.Context(), spec); err == nil || !strings.Contains(err.Error(), "which a confined terminal must not read") {
		t.Fatalf("a sandbox holding the data dir: %v", err)
	}
}

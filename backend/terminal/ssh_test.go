package terminal_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/terminal"
)

// fakeSSH puts an `ssh` on PATH that records its arguments, asks for a password the way
// OpenSSH does, records what was typed, and then runs a shell as the "remote" side. For the
// one-shot commands it answers like tmux.
func fakeSSH(t *testing.T) (logDir string) {
	t.Helper()
	dir := t.TempDir()
	logDir = t.TempDir()
	script := fmt.Sprintf(`#!/bin/bash
log=%q
printf '%%s\n' "$@" > "$log/args.$$"
case " $* " in
*" nohost "*)
	echo "ssh: Could not resolve hostname nohost: Name or service not known" >&2; exit 255;;
*" list-sessions "*)
	printf 'clusterspace-pane-1a2b3c4d\t2\t1\t1700000000\nbuild\t1\t0\t1700000100\n'; exit 0;;
*" kill-session "*)
	printf '%%s\n' "$@" > "$log/kill"; exit 0;;
esac
for a in "$@"; do case "$a" in *@*) dest="$a";; esac; done
printf "%%s's password: " "$dest"
stty -echo; IFS= read -r pw; stty echo; echo
printf '%%s\n' "$pw" >> "$log/passwords"
echo "Welcome to the fake host"
PS1='remote$ ' exec bash --norc --noprofile -i
`, logDir)
	if err := os.WriteFile(filepath.Join(dir, "ssh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return logDir
}

func TestSSHCommandLine(t *testing.T) {
	t.Parallel()
	if got := terminal.TmuxSessionName("pane-1a2b3c4d5e6f"); got != "clusterspace-pane-1a2b3c4d" {
		t.Fatalf("session name %q", got)
	}
	argv, err := terminal.SSHCommand(terminal.SSHTarget{Host: "example.org", Port: 2222, User: "me", KeyPath: "/home/me/.ssh/id_ed25519"}, "pane-1a2b3c4d5e6f")
	want := []string{"ssh", "-t", "-p", "2222", "-i", "/home/me/.ssh/id_ed25519", "me@example.org",
		"tmux", "new-session", "-A", "-s", "clusterspace-pane-1a2b3c4d"}
	if err != nil || !slices.Equal(argv, want) {
		t.Fatalf("SSHCommand = %q, %v\nwant %q", argv, err, want)
	}
	argv, _ = terminal.SSHCommand(terminal.SSHTarget{Host: "10.0.0.7", User: "root"}, "pane-ffffffff0000")
	if !slices.Equal(argv, []string{"ssh", "-t", "root@10.0.0.7", "tmux", "new-session", "-A", "-s", "clusterspace-pane-ffffffff"}) {
		t.Fatalf("no port, no key: %q", argv)
	}
	for _, bad := range []terminal.SSHTarget{{Host: "-oProxyCommand=sh"}, {Host: "h; rm -rf /"}, {Host: "h", User: "-l"}, {Host: "h", Port: 70000}, {}} {
		if _, err := terminal.SSHCommand(bad, "pane-1"); err == nil {
			t.Errorf("SSHCommand accepted %+v", bad)
		}
	}
	secret := terminal.SSHTarget{Host: "h", User: "u", Password: "hunter2-secret"}
	for _, format := range []string{"%v", "%+v", "%#v", "%s"} {
		if s := fmt.Sprintf(format, secret); strings.Contains(s, "hunter2") {
			t.Errorf("%s shows the password: %s", format, s)
		}
	}
}

func TestSSHPaneTypesThePasswordOnce(t *testing.T) {
	logDir := fakeSSH(t)
	m := newManager(t, terminal.Options{})
	target := &terminal.SSHTarget{Host: "fakehost", Port: 2222, User: "me", KeyPath: "/k/id", Password: "s3cret-pw"}
	tab, err := m.Open(context.Background(), terminal.Spec{PaneID: "pane-1a2b3c4d5e6f", Dir: t.TempDir(), SSH: target})
	if err != nil {
		t.Fatal(err)
	}
	if tab.Remote != "me@fakehost:2222" || tab.Title != "ssh me@fakehost:2222" {
		t.Fatalf("tab info %+v", tab)
	}
	waitText(t, m, tab.PaneID, "", "Welcome to the fake host")
	waitPrompt(t, m, tab.PaneID, "")

	args, _ := filepath.Glob(filepath.Join(logDir, "args.*"))
	if len(args) != 1 {
		t.Fatalf("ssh ran %d times", len(args))
	}
	b, _ := os.ReadFile(args[0])
	want := "-t\n-p\n2222\n-i\n/k/id\nme@fakehost\ntmux\nnew-session\n-A\n-s\nclusterspace-pane-1a2b3c4d\n"
	if string(b) != want {
		t.Fatalf("ssh arguments:\n%s\nwant:\n%s", b, want)
	}

	// Another password prompt after the login is not the server's: it gets nothing typed.
	st, _ := m.Status(tab.PaneID, "")
	m.Write(tab.PaneID, "", []byte(`printf 'Password: '; IFS= read -r x; echo "got$((1+1))=[$x]"`+"\r"))
	c, _ := m.WaitForCompletion(context.Background(), tab.PaneID, "", terminal.WaitOptions{Since: st.Cursor, Prompt: true, Timeout: 5 * time.Second})
	if c.Reason != terminal.CompletedPrompt {
		t.Fatalf("the second password prompt: %+v", c)
	}
	time.Sleep(300 * time.Millisecond)
	m.Write(tab.PaneID, "", []byte("typed-by-hand\r"))
	if got := waitText(t, m, tab.PaneID, "", `got2=\[[^\]]*\]`); got != "got2=[typed-by-hand]" {
		t.Fatalf("the password was typed into a later prompt: %s", got)
	}
	pw, _ := os.ReadFile(filepath.Join(logDir, "passwords"))
	if string(pw) != "s3cret-pw\n" {
		t.Fatalf("passwords typed at the ssh prompt: %q", pw)
	}
	if text, _ := m.Tail(tab.PaneID, "", 100); strings.Contains(text, "s3cret") {
		t.Fatalf("the password shows in the terminal:\n%s", text)
	}
}

func TestRemoteTmuxSessions(t *testing.T) {
	logDir := fakeSSH(t)
	m := newManager(t, terminal.Options{})
	target := terminal.SSHTarget{Host: "fakehost", User: "me", Port: 2200}
	sessions, err := m.RemoteSessions(context.Background(), target)
	if err != nil {
		t.Fatal(err)
	}
	if len(sessions) != 2 || sessions[0].Name != "clusterspace-pane-1a2b3c4d" || !sessions[0].Pane || sessions[0].Windows != 2 ||
		!sessions[0].Attached || sessions[1].Pane || sessions[1].Created.Unix() != 1700000100 {
		t.Fatalf("sessions %+v", sessions)
	}
	args, _ := filepath.Glob(filepath.Join(logDir, "args.*"))
	b, _ := os.ReadFile(args[0])
	if !strings.HasPrefix(string(b), "-o\nBatchMode=yes\n-o\nConnectTimeout=5\n-p\n2200\nme@fakehost\ntmux\nlist-sessions\n") {
		t.Fatalf("one-shot ssh arguments:\n%s", b)
	}
	if err := m.KillRemoteSession(context.Background(), target, "build"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(logDir, "kill")); !strings.HasSuffix(string(b), "tmux\nkill-session\n-t\n=build\n") {
		t.Fatalf("kill arguments:\n%s", b)
	}
	if err := m.KillRemoteSession(context.Background(), target, "x; reboot"); err == nil {
		t.Fatal("a session name with shell syntax was sent")
	}
	_, err = m.RemoteSessions(context.Background(), terminal.SSHTarget{Host: "nohost"})
	if err == nil || !strings.Contains(err.Error(), "Could not resolve hostname") {
		t.Fatalf("unreachable host: %v", err)
	}
}

package terminal_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/terminal"
	"github.com/clusterspace/clusterspace/backend/terminal/terminaltest"
)

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

// sshManager is a manager whose ssh trusts the test server's host key (pre-seeded in a
// known_hosts of its own) and reads none of the machine's ssh configuration.
func sshManager(t *testing.T) *terminal.Manager {
	t.Helper()
	known := filepath.Join(t.TempDir(), "known_hosts")
	if err := sshd.KnownHosts(known); err != nil {
		t.Fatal(err)
	}
	return newManager(t, terminal.Options{SSHOptions: terminaltest.ClientOptions(known)})
}

func keyTarget() *terminal.SSHTarget {
	return &terminal.SSHTarget{Host: sshd.Host, Port: sshd.Port, User: sshd.User, KeyPath: sshd.KeyPath}
}

// remotePrompt waits for the remote shell's prompt, user@host:dir$ (Debian's default bashrc).
func remotePrompt(t *testing.T, m *terminal.Manager, pane string) {
	t.Helper()
	waitText(t, m, pane, "", regexp.QuoteMeta(sshd.User)+`@[^:\s]+:\S*\$ `)
}

// remoteRun types a command line in the remote shell and waits until re shows after it.
func remoteRun(t *testing.T, m *terminal.Manager, pane, line, re string) string {
	t.Helper()
	if err := m.Write(pane, "", []byte(line+"\r")); err != nil {
		t.Fatal(err)
	}
	return waitText(t, m, pane, "", re)
}

// waitTail waits until the pane's last lines contain s; unlike waitText it also sees what a
// tab printed as its process ended.
func waitTail(t *testing.T, m *terminal.Manager, pane, s string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		text, _ := m.Tail(pane, "", 40)
		if strings.Contains(text, s) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the pane never showed %q; screen:\n%s", s, text)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// countLines counts sshd log lines containing s.
func countLines(log, s string) int {
	n := 0
	for line := range strings.Lines(log) {
		if strings.Contains(line, s) {
			n++
		}
	}
	return n
}

// TestSSHPaneKeyLoginAndReattach logs in with a key to a real sshd, finds itself in the
// pane's tmux session, loses the connection (ssh killed), and restarts the tab: the pane
// reattaches to the same tmux session, whose shell still holds what was set before.
func TestSSHPaneKeyLoginAndReattach(t *testing.T) {
	m := sshManager(t)
	pane := "pane-5a5a1b1b0000"
	tab, err := m.Open(context.Background(), terminal.Spec{PaneID: pane, Dir: t.TempDir(), SSH: keyTarget()})
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("%s@%s:%d", sshd.User, sshd.Host, sshd.Port); tab.Remote != want {
		t.Fatalf("tab remote %q, want %q", tab.Remote, want)
	}
	remotePrompt(t, m, pane)
	remoteRun(t, m, pane, `export MARK=kept-$((40+2)); echo "in=$(tmux display-message -p '#S') as=$(whoami)"`,
		`in=clusterspace-pane-5a5a1b1b as=`+regexp.QuoteMeta(sshd.User))

	sessions, err := m.RemoteSessions(context.Background(), *keyTarget())
	if err != nil || len(sessions) != 1 || sessions[0].Name != "clusterspace-pane-5a5a1b1b" || !sessions[0].Pane || !sessions[0].Attached {
		t.Fatalf("remote sessions %+v, %v", sessions, err)
	}

	// The connection drops (the server side goes away): the pane says so and how to reconnect.
	if n := sshd.DropConnections(); n == 0 {
		t.Fatal("no connection to drop")
	}
	waitTail(t, m, pane, `Restart the tab to reconnect`)
	if info := m.Tabs(pane)[0]; info.Running || info.ExitCode == nil || *info.ExitCode != 255 {
		t.Fatalf("tab after the drop: %+v", info)
	}
	if sessions, _ := m.RemoteSessions(context.Background(), *keyTarget()); len(sessions) != 1 || sessions[0].Attached {
		t.Fatalf("after the drop the tmux session should live on, detached: %+v", sessions)
	}

	if err := m.Restart(context.Background(), pane, ""); err != nil {
		t.Fatal(err)
	}
	remoteRun(t, m, pane, `echo "back=$MARK"`, `back=kept-42`)
	if got := len(m.Tabs(pane)); got != 1 {
		t.Fatalf("%d tabs after the restart", got)
	}

	if err := m.KillRemoteSession(context.Background(), *keyTarget(), "clusterspace-pane-5a5a1b1b"); err != nil {
		t.Fatal(err)
	}
	waitTail(t, m, pane, `process exited`)
	if sessions, err := m.RemoteSessions(context.Background(), *keyTarget()); err != nil || len(sessions) != 0 {
		t.Fatalf("after kill-session: %+v, %v", sessions, err)
	}
	if err := m.KillRemoteSession(context.Background(), *keyTarget(), "x; reboot"); err == nil {
		t.Fatal("a session name with shell syntax was sent")
	}
}

// TestSSHPaneTypesThePasswordOnce logs in with the saved password to a server that asks for
// it: the password is typed at ssh's prompt once, never shown, and not typed again at a
// later "Password:" prompt inside the session.
func TestSSHPaneTypesThePasswordOnce(t *testing.T) {
	m := sshManager(t)
	before := sshd.Log()
	target := &terminal.SSHTarget{Host: sshd.Host, Port: sshd.PasswordPort, User: sshd.User, Password: sshd.Password}
	tab, err := m.Open(context.Background(), terminal.Spec{PaneID: "pane-7e7e00000001", Dir: t.TempDir(), SSH: target})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Its tmux session outlives the pane (as a reattach needs); later tests list sessions.
		m.KillRemoteSession(context.Background(), *keyTarget(), "clusterspace-pane-7e7e0000")
	})
	remotePrompt(t, m, tab.PaneID)
	log := strings.TrimPrefix(sshd.Log(), before)
	if countLines(log, "Accepted password for "+sshd.User) != 1 || countLines(log, "Failed password") != 0 {
		t.Fatalf("sshd saw this login:\n%s", log)
	}

	// Another password prompt after the login is not the server's: it gets nothing typed.
	m.Write(tab.PaneID, "", []byte(`printf 'Password: '; IFS= read -r x; echo "got$((1+1))=[$x]"`+"\r"))
	waitText(t, m, tab.PaneID, "", `Password: *$`)
	time.Sleep(300 * time.Millisecond)
	m.Write(tab.PaneID, "", []byte("typed-by-hand\r"))
	if got := waitText(t, m, tab.PaneID, "", `got2=\[[^\]]*\]`); got != "got2=[typed-by-hand]" {
		t.Fatalf("the password was typed into a later prompt: %s", got)
	}
	if text, _ := m.Tail(tab.PaneID, "", 200); strings.Contains(text, sshd.Password) {
		t.Fatalf("the password shows in the terminal:\n%s", text)
	}
	// Listing sessions needs a key: a password-only login says so instead of hanging.
	_, err = m.RemoteSessions(context.Background(), terminal.SSHTarget{Host: sshd.Host, Port: sshd.PasswordPort, User: sshd.User})
	if err == nil || !strings.Contains(err.Error(), "needs key authentication") {
		t.Fatalf("one-shot without a key: %v", err)
	}
}

// TestSSHPaneAsksAboutAnUnknownHostOnce connects to a server whose host key is not known:
// ssh asks in the pane, the person answers yes, the key is remembered, and the next
// connection goes straight in.
func TestSSHPaneAsksAboutAnUnknownHostOnce(t *testing.T) {
	known := filepath.Join(t.TempDir(), "known_hosts")
	m := newManager(t, terminal.Options{SSHOptions: terminaltest.ClientOptions(known)})
	tab, err := m.Open(context.Background(), terminal.Spec{PaneID: "pane-0a0a00000002", Dir: t.TempDir(), SSH: keyTarget()})
	if err != nil {
		t.Fatal(err)
	}
	waitText(t, m, tab.PaneID, "", `Are you sure you want to continue connecting \(yes/no/\[fingerprint\]\)\? *$`)
	m.Write(tab.PaneID, "", []byte("yes\r"))
	remotePrompt(t, m, tab.PaneID)
	b, err := os.ReadFile(known)
	if err != nil || !strings.Contains(string(b), fmt.Sprintf("[%s]:%d", sshd.Host, sshd.Port)) ||
		!strings.Contains(string(b), strings.Fields(sshd.HostKeyLine)[1]) {
		t.Fatalf("the accepted host key was not remembered: %q, %v", b, err)
	}
	if err := m.ClosePane(tab.PaneID); err != nil {
		t.Fatal(err)
	}

	again, err := m.Open(context.Background(), terminal.Spec{PaneID: "pane-0a0a00000003", Dir: t.TempDir(), SSH: keyTarget()})
	if err != nil {
		t.Fatal(err)
	}
	remotePrompt(t, m, again.PaneID)
	if text, _ := m.Tail(again.PaneID, "", 200); strings.Contains(text, "Are you sure") {
		t.Fatalf("asked again about a remembered host:\n%s", text)
	}
	t.Cleanup(func() {
		// Best effort: the test user's sessions go with the user at the end anyway.
		m.KillRemoteSession(context.Background(), *keyTarget(), "clusterspace-pane-0a0a0000")
	})
}

// TestSSHPaneWithAWrongKeyExplains logs in with a key the server does not know: the pane shows
// ssh's refusal and what to check, and the tab ends. A key path that is no file fails at once.
func TestSSHPaneWithAWrongKeyExplains(t *testing.T) {
	m := sshManager(t)
	wrong := &terminal.SSHTarget{Host: sshd.Host, Port: sshd.Port, User: sshd.User, KeyPath: sshd.WrongKeyPath}
	tab, err := m.Open(context.Background(), terminal.Spec{PaneID: "pane-bad0bad00001", Dir: t.TempDir(), SSH: wrong})
	if err != nil {
		t.Fatal(err)
	}
	waitTail(t, m, tab.PaneID, `Permission denied (publickey)`)
	waitTail(t, m, tab.PaneID, `check the host, port, key path and password of the saved server`)
	if info := m.Tabs(tab.PaneID)[0]; info.Running || info.ExitCode == nil || *info.ExitCode != 255 {
		t.Fatalf("tab after a refused login: %+v", info)
	}

	missing := &terminal.SSHTarget{Host: sshd.Host, Port: sshd.Port, User: sshd.User, KeyPath: filepath.Join(t.TempDir(), "no-such-key")}
	_, err = m.Open(context.Background(), terminal.Spec{PaneID: "pane-bad0bad00002", Dir: t.TempDir(), SSH: missing})
	if err == nil || !strings.Contains(err.Error(), "no-such-key") || !strings.Contains(err.Error(), "fix the key path") {
		t.Fatalf("a missing key file: %v", err)
	}

	// Nothing listens on a closed port: the one-shot says so.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	_, err = m.RemoteSessions(context.Background(), terminal.SSHTarget{Host: sshd.Host, Port: port, User: sshd.User, KeyPath: sshd.KeyPath})
	if err == nil || !strings.Contains(err.Error(), "Connection refused") {
		t.Fatalf("a closed port: %v", err)
	}
}

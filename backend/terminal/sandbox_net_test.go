package terminal_test

import (
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/terminal"
)

// listenUDP counts the datagrams 127.0.0.1:port receives.
func listenUDP(t *testing.T) (port int, received func() int) {
	t.Helper()
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	count := make(chan int, 1)
	count <- 0
	go func() {
		buf := make([]byte, 64)
		for {
			if _, _, err := conn.ReadFrom(buf); err != nil {
				return
			}
			count <- <-count + 1
		}
	}()
	return conn.LocalAddr().(*net.UDPAddr).Port, func() int { n := <-count; count <- n; return n }
}

// listenUnix counts the connections a Unix socket at path accepts (a stand-in for the
// session D-Bus or ssh-agent).
func listenUnix(t *testing.T, path string) (accepted func() int) {
	t.Helper()
	return countAccepts(t, "unix", path).accepted
}

func TestConfinedShellCannotUseUnixSocketsNorUDPWithoutNetwork(t *testing.T) {
	t.Parallel()
	m := newManager(t, terminal.Options{})
	udpPort, received := listenUDP(t)
	sock := filepath.Join(t.TempDir(), "agent.sock")
	accepted := listenUnix(t, sock)
	probe := fmt.Sprintf(`(echo x > /dev/udp/127.0.0.1/%d) && echo udp-$((1+1))-sent || echo udp-$((1+1))-refused; `+
		`/usr/bin/python3 -c 'import socket; s=socket.socket(socket.AF_UNIX); s.connect(%q)' 2>/dev/null && echo unix-$((2+2))-open || echo unix-$((2+2))-refused`,
		udpPort, sock)

	// Control: an unconfined shell gets through to both.
	free := openBash(t, m, bashSpec(t, "pane-0d900000000"))
	run(t, m, free.PaneID, "", probe)
	if text, _ := m.Tail(free.PaneID, "", 4); !strings.Contains(text, "udp-2-sent") || !strings.Contains(text, "unix-4-open") {
		t.Fatalf("the unconfined shell could not use UDP or the Unix socket:\n%s", text)
	}
	// A confined shell with the network allowed may send UDP, but only inside its own network
	// namespace: nothing reaches the host's loopback. Unix sockets lead out of any sandbox
	// (D-Bus to the keyring, docker.sock) and stay closed.
	withNet := bashSpec(t, "pane-0d900000001")
	withNet.Sandbox = &terminal.Sandbox{WritableDirs: []string{withNet.Dir}}
	netTab := openBash(t, m, withNet)
	run(t, m, netTab.PaneID, "", probe)
	if text, _ := m.Tail(netTab.PaneID, "", 4); !strings.Contains(text, "unix-4-refused") {
		t.Fatalf("confined shell with network:\n%s", text)
	}
	if settle(received, 1) != 1 || settle(accepted, 1) != 1 {
		t.Fatalf("controls: %d datagrams, %d Unix connections; want 1 and 1", received(), accepted())
	}

	spec := bashSpec(t, "pane-0d900000002")
	spec.Sandbox = &terminal.Sandbox{WritableDirs: []string{spec.Dir}, NoNetwork: true}
	tab := openBash(t, m, spec)
	run(t, m, tab.PaneID, "", probe)
	// A socketpair connects only the processes that share it, and stays allowed.
	run(t, m, tab.PaneID, "", `/usr/bin/python3 -c 'import socket; a,b=socket.socketpair(); a.send(b"6"); print("pair-"+b.recv(1).decode()+"-ok")'`)
	text, _ := m.Tail(tab.PaneID, "", 10)
	for _, want := range []string{"udp-2-refused", "unix-4-refused", "pair-6-ok"} {
		if !strings.Contains(text, want) {
			t.Errorf("confined shell output lacks %q:\n%s", want, text)
		}
	}
	noMore(t, received, 1, "datagrams (the control's one, then none from the confined shell)")
	noMore(t, accepted, 1, "Unix connections (the control's one, then none from the confined shell)")
}

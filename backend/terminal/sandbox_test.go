package terminal_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/terminal"
)

func TestLandlockSupportTellsTheTruth(t *testing.T) {
	t.Parallel()
	abi, err := terminal.LandlockSupport()
	if err != nil {
		t.Fatalf("this machine's kernel offers Landlock (ABI 7), but: %v", err)
	}
	t.Logf("kernel Landlock ABI %d", abi)
	if abi < 4 {
		t.Fatalf("ABI %d cannot confine the network; the tests below need 4+", abi)
	}
}

// listen opens a TCP listener on 127.0.0.1 and counts the connections it accepts.
func listen(t *testing.T) (port int, accepted func() int) {
	t.Helper()
	ln := countAccepts(t, "tcp4", "127.0.0.1:0")
	return ln.Addr().(*net.TCPAddr).Port, ln.accepted
}

// counting is a listener that accepts and closes every connection, counting them.
type counting struct {
	net.Listener
	count chan int
}

func (c counting) accepted() int { n := <-c.count; c.count <- n; return n }

// countAccepts listens on network/address until the test ends, counting what it accepts.
func countAccepts(t *testing.T, network, address string) counting {
	t.Helper()
	ln, err := net.Listen(network, address)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	c := counting{Listener: ln, count: make(chan int, 1)}
	c.count <- 0
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			c.count <- <-c.count + 1
			conn.Close()
		}
	}()
	return c
}

// settle polls accepted until it reports want or a second passes, since the accept loop
// counts a connection a moment after the client sees it open.
func settle(accepted func() int, want int) int {
	for deadline := time.Now().Add(time.Second); accepted() != want && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	return accepted()
}

// noMore fails the test unless count stays at want: it waits the full second settle gives a
// connection or datagram that must not come; what names what is counted.
func noMore(t *testing.T, count func() int, want int, what string) {
	t.Helper()
	if n := settle(count, want+1); n != want {
		t.Errorf("%d %s, want %d", n, what, want)
	}
}

func TestConfinedShellWritesOnlyInsideAndCannotConnect(t *testing.T) {
	t.Parallel()
	m := newManager(t, terminal.Options{})
	inside, outside := t.TempDir(), t.TempDir()
	port, accepted := listen(t)
	connect := fmt.Sprintf("(exec 3<>/dev/tcp/127.0.0.1/%d) 2>/dev/null && echo net-$((1+1))-open || echo net-$((1+1))-refused", port)

	// Control: an unconfined shell reaches the listener, so a refusal below is the sandbox's.
	free := openBash(t, m, bashSpec(t, "pane-f2ee00000000"))
	run(t, m, free.PaneID, "", connect)
	if text, _ := m.Tail(free.PaneID, "", 3); !strings.Contains(text, "net-2-open") || settle(accepted, 1) != 1 {
		t.Fatalf("the unconfined shell could not connect (%d accepted): %q", accepted(), text)
	}

	spec := bashSpec(t, "pane-c0ff1ed00000")
	spec.Dir = inside
	spec.Sandbox = &terminal.Sandbox{WritableDirs: []string{inside}, NoNetwork: true}
	tab := openBash(t, m, spec)
	if !tab.Confined {
		t.Fatal("TabInfo.Confined is false")
	}
	run(t, m, tab.PaneID, "", "echo data > "+filepath.Join(inside, "in.txt")+" && mkdir sub && echo ok > sub/f && echo in-$((2+2))-ok")
	run(t, m, tab.PaneID, "", "echo data > "+filepath.Join(outside, "out.txt")+" || echo out-$((3+3))-denied")
	run(t, m, tab.PaneID, "", "rm -f "+filepath.Join(outside, "victim")+"; touch /tmp/confined-$$ || echo tmp-$((4+4))-denied")
	run(t, m, tab.PaneID, "", connect)
	run(t, m, tab.PaneID, "", "echo hi > /dev/null && stty size >/dev/null && echo dev-$((5+5))-ok")
	text, _ := m.Tail(tab.PaneID, "", 40)
	// Outside its dirs the filesystem is read-only (bwrap), and Landlock refuses it again.
	for _, want := range []string{"in-4-ok", "Read-only file system", "out-6-denied", "tmp-8-denied", "net-2-refused", "dev-10-ok"} {
		if !strings.Contains(text, want) {
			t.Errorf("confined shell output lacks %q:\n%s", want, text)
		}
	}
	if b, err := os.ReadFile(filepath.Join(inside, "sub", "f")); err != nil || string(b) != "ok\n" {
		t.Errorf("write inside the sandbox: %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(outside, "out.txt")); err == nil {
		t.Error("the confined shell wrote outside its directory")
	}
	noMore(t, accepted, 1, "connections (the control's one, then none from the confined shell)")

	// Without NoNetwork the same sandbox still confines writes, and its network namespace is
	// its own: the host's loopback services (here the listener) are not on it.
	spec.PaneID = "pane-c0ff1ed00001"
	spec.Sandbox = &terminal.Sandbox{WritableDirs: []string{inside}}
	netTab := openBash(t, m, spec)
	run(t, m, netTab.PaneID, "", connect+"; echo x > "+filepath.Join(outside, "o2")+" || echo still-$((7+7))-denied")
	if text, _ := m.Tail(netTab.PaneID, "", 5); !strings.Contains(text, "net-2-refused") || !strings.Contains(text, "still-14-denied") {
		t.Fatalf("confined shell with network: %q", text)
	}
	noMore(t, accepted, 1, "connections to the host's loopback (none from a confined shell with network)")
}

func TestSandboxRefusesWhatItCannotDo(t *testing.T) {
	t.Parallel()
	m := newManager(t, terminal.Options{})
	spec := bashSpec(t, "pane-bad0000000000")
	spec.Sandbox = &terminal.Sandbox{WritableDirs: []string{"/no/such/dir"}}
	if _, err := m.Open(context.Background(), spec); err == nil || !strings.Contains(err.Error(), `sandbox dir "/no/such/dir" does not exist`) {
		t.Fatalf("missing sandbox dir: %v", err)
	}
	if code := terminal.SandboxExecMain([]string{"--write"}); code != 125 {
		t.Fatalf("bad usage exit %d", code)
	}
	if code := terminal.SandboxExecMain([]string{"--", "/no/such/command"}); code != 127 {
		t.Fatalf("missing command exit %d", code)
	}
}

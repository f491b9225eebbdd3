package terminal_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/egress"
	"github.com/clusterspace/clusterspace/backend/terminal"
	"github.com/clusterspace/clusterspace/backend/tools"
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
	if n := settle(accepted, 2); n != 1 { // waits the full second for a connection that must not come
		t.Errorf("the confined shell connected out (%d connections)", n)
	}

	// Without NoNetwork the same sandbox still confines writes, and its network namespace is
	// its own: the host's loopback services (here the listener) are not on it.
	spec.PaneID = "pane-c0ff1ed00001"
	spec.Sandbox = &terminal.Sandbox{WritableDirs: []string{inside}}
	netTab := openBash(t, m, spec)
	run(t, m, netTab.PaneID, "", connect+"; echo x > "+filepath.Join(outside, "o2")+" || echo still-$((7+7))-denied")
	if text, _ := m.Tail(netTab.PaneID, "", 5); !strings.Contains(text, "net-2-refused") || !strings.Contains(text, "still-14-denied") {
		t.Fatalf("confined shell with network: %q", text)
	}
	if n := settle(accepted, 2); n != 1 {
		t.Errorf("a confined shell with network reached the host's loopback (%d connections)", n)
	}
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

// An ancestor's environment (where `make run`, a wrapper script or `env K=… sh -c` leaves an
// API key) and every process of the app are out of sight of a confined shell.
func TestConfinedShellSeesNoAncestor(t *testing.T) {
	t.Parallel()
	m := newManager(t, terminal.Options{})
	app := os.Getpid() // this test process is the shell's parent, as the app is
	probe := fmt.Sprintf("tr '\\0' '\\n' < /proc/%d/environ | grep -c '^PATH=' && echo env-$((1+1))-read || echo env-$((1+1))-hidden; "+
		"echo procs-$(ls /proc | grep -c '^[0-9]')-seen", app)

	free := openBash(t, m, bashSpec(t, "pane-a2ce00000000"))
	run(t, m, free.PaneID, "", probe)
	if text, _ := m.Tail(free.PaneID, "", 4); !strings.Contains(text, "env-2-read") {
		t.Fatalf("control: the unconfined shell could not read its parent's environment:\n%s", text)
	}

	spec := bashSpec(t, "pane-a2ce00000001")
	spec.Sandbox = &terminal.Sandbox{WritableDirs: []string{spec.Dir}}
	tab := openBash(t, m, spec)
	run(t, m, tab.PaneID, "", probe)
	text, _ := m.Tail(tab.PaneID, "", 4)
	if !strings.Contains(text, "env-2-hidden") {
		t.Fatalf("a confined shell read the app's environment:\n%s", text)
	}
	// bwrap, the shell, and the probe's own processes: a handful, not the machine's.
	var seen int
	if _, err := fmt.Sscanf(text[strings.LastIndex(text, "procs-"):], "procs-%d-seen", &seen); err != nil || seen > 6 {
		t.Fatalf("a confined shell sees %d processes (%v):\n%s", seen, err, text)
	}
}

// With the network allowed, the only way out of a confined shell's own network namespace is
// the egress proxy, which refuses the machine's loopback services unless the person opened one.
func TestConfinedShellReachesTheNetworkOnlyThroughTheProxy(t *testing.T) {
	t.Parallel()
	m := newManager(t, terminal.Options{})
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "opened-site-page")
	}))
	defer site.Close()
	service, accepted := listen(t) // an app service on loopback, say the DevTools port
	sitePort := site.Listener.Addr().(*net.TCPAddr).Port
	proxy, err := egress.Start(t.TempDir(), "goal-net", egress.Rules{Ceiling: tools.NetworkGet,
		AllowLocal: []string{fmt.Sprintf("127.0.0.1:%d", sitePort)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()

	spec := bashSpec(t, "pane-e9e500000000")
	spec.Sandbox = &terminal.Sandbox{WritableDirs: []string{spec.Dir}, Proxy: proxy.Path()}
	tab := openBash(t, m, spec)
	run(t, m, tab.PaneID, "", fmt.Sprintf("curl -s %s/page; echo; curl -s http://127.0.0.1:%d/json; echo; "+
		"(exec 3<>/dev/tcp/127.0.0.1/%d) 2>/dev/null && echo direct-$((1+1))-open || echo direct-$((1+1))-refused", site.URL, service, service))
	text, _ := m.Tail(tab.PaneID, "", 10)
	for _, want := range []string{"opened-site-page", "outside a confined goal's reach", "direct-2-refused"} {
		if !strings.Contains(text, want) {
			t.Errorf("confined shell output lacks %q:\n%s", want, text)
		}
	}
	if n := settle(accepted, 1); n != 0 {
		t.Errorf("the app's loopback service was reached %d times from the sandbox", n)
	}
}

// A pane confined to a goal's sandbox confines every tab opened in it later, and a password
// file named as hidden cannot be read.
func TestConfinedPaneConfinesNewTabs(t *testing.T) {
	t.Parallel()
	m := newManager(t, terminal.Options{})
	spec := bashSpec(t, "pane-b0d4d0000000")
	secret := filepath.Join(t.TempDir(), "serve-password")
	writeFile(t, secret, "TOPSECRET-password\n")
	m.ConfinePane(spec.PaneID, terminal.Sandbox{WritableDirs: []string{spec.Dir}, HiddenDirs: []string{secret}, NoNetwork: true})
	tab := openBash(t, m, spec) // no Sandbox in the spec: the pane's applies
	if !tab.Confined {
		t.Fatal("a new tab of a confined pane is not confined")
	}
	if dir, err := m.TabSandboxDir(spec.PaneID, ""); err != nil || dir != spec.Dir {
		t.Fatalf("TabSandboxDir = %q, %v; want %q", dir, err, spec.Dir)
	}
	run(t, m, tab.PaneID, "", "cat "+secret+" || echo pw-$((1+1))-hidden; touch "+filepath.Join(filepath.Dir(secret), "x")+" || echo out-$((2+2))-denied")
	text, _ := m.Tail(tab.PaneID, "", 6)
	if strings.Contains(text, "TOPSECRET") || !strings.Contains(text, "pw-2-hidden") || !strings.Contains(text, "out-4-denied") {
		t.Fatalf("confined pane's tab:\n%s", text)
	}
	m.ReleasePane(spec.PaneID, "/some/other/goal")
	if _, ok := m.PaneSandbox(spec.PaneID); !ok {
		t.Fatal("another goal's release freed this pane")
	}
	m.ReleasePane(spec.PaneID, spec.Dir)
	if next := openBash(t, m, spec); next.Confined {
		t.Fatal("a released pane still confines new tabs")
	}
	// A closed pane's boundary goes with it: the record does not outlive the pane.
	m.ConfinePane(spec.PaneID, terminal.Sandbox{WritableDirs: []string{spec.Dir}})
	if err := m.ClosePane(spec.PaneID); err != nil {
		t.Fatal(err)
	}
	if _, ok := m.PaneSandbox(spec.PaneID); ok {
		t.Fatal("a closed pane's boundary is still kept")
	}
}

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
	if n, c := settle(received, 2), settle(accepted, 2); n != 1 || c != 1 { // waits a second for what must not come
		t.Errorf("a confined shell got out: %d datagrams, %d Unix connections (1 and 1 were the control's)", n, c)
	}
}

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

// In a confined shell whose HOME and /tmp it may not write, the everyday tools still find a
// writable temp dir and caches when the sandbox has a scratch dir: mktemp works, and Go's
// build cache takes files. Without one they fail, as users saw on every command.
func TestConfinedShellScratchKeepsToolsWorking(t *testing.T) {
	t.Parallel()
	home := t.TempDir() // outside the sandbox: not writable for the confined shell
	probe := `d=$(go env GOCACHE) && mkdir -p "$d" && touch "$d/probe" && echo "gocache-ok $d"; f=$(mktemp) && echo "mktemp-ok $f"; echo "tmpdir=[$TMPDIR]"`
	m := newManager(t, terminal.Options{})

	for _, withScratch := range []bool{false, true} {
		spec := bashSpec(t, "pane-5c0000000000")
		if withScratch {
			spec.PaneID = "pane-5c0000000001"
		}
		spec.Env = []string{"HOME=" + home}
		scratch := filepath.Join(t.TempDir(), "goal-scratch")
		spec.Sandbox = &terminal.Sandbox{WritableDirs: []string{spec.Dir}}
		if withScratch {
			spec.Sandbox.Scratch = scratch
		}
		tab := openBash(t, m, spec)
		run(t, m, tab.PaneID, "", probe)
		text, _ := m.Tail(tab.PaneID, "", 8)
		worked := strings.Contains(text, "gocache-ok "+scratch) && strings.Contains(text, "mktemp-ok "+scratch+"/tmp/")
		if withScratch != worked {
			t.Errorf("scratch %v: tools worked %v:\n%s", withScratch, worked, text)
		}
		if !withScratch && !strings.Contains(text, "Read-only file system") {
			t.Errorf("without scratch the confined shell should be refused its HOME cache and /tmp:\n%s", text)
		}
		if withScratch {
			st, err := os.Stat(scratch)
			if err != nil || st.Mode().Perm() != 0o700 {
				t.Errorf("scratch dir %s: %v %v, want mode 0700", scratch, st, err)
			}
		}
	}
}

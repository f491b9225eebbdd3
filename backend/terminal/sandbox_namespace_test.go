package terminal_test

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/egress"
	"github.com/clusterspace/clusterspace/backend/terminal"
	"github.com/clusterspace/clusterspace/backend/tools"
)

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
	noMore(t, accepted, 0, "connections to the app's loopback service from the sandbox")
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

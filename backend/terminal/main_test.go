package terminal_test

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/terminal"
	"github.com/clusterspace/clusterspace/backend/terminal/terminaltest"
)

// helperEnv makes this test binary act as the `clusterspace sandbox-exec` helper, so the
// confinement tests run the real helper code without the main binary.
const helperEnv = "TERMINAL_TEST_SANDBOX_HELPER"

// sshd is the real OpenSSH server the SSH pane tests log in to, one for the package.
var sshd *terminaltest.SSHD

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "1" && len(os.Args) > 1 && os.Args[1] == "sandbox-exec" {
		os.Unsetenv(helperEnv) // the confined shell should not inherit it
		os.Exit(terminal.SandboxExecMain(os.Args[2:]))
	}
	os.Exit(terminaltest.Run(m, "terminal", &sshd))
}

func newManager(t testing.TB, opts terminal.Options) *terminal.Manager {
	t.Helper()
	if opts.SandboxHelper == "" {
		opts.SandboxHelper = os.Args[0]
		opts.SandboxHelperEnv = []string{helperEnv + "=1"}
	}
	m := terminal.NewManager(opts)
	t.Cleanup(m.Shutdown)
	return m
}

// bashSpec is a real interactive bash with a predictable home (no ~/.bashrc) and the
// system's usual prompt, user@host:dir# .
func bashSpec(t testing.TB, paneID string) terminal.Spec {
	dir := t.TempDir()
	return terminal.Spec{PaneID: paneID, Shell: "/bin/bash", Dir: dir, Env: []string{"HOME=" + dir}}
}

// openBash opens a bash tab and waits for its first prompt.
func openBash(t testing.TB, m *terminal.Manager, spec terminal.Spec) terminal.TabInfo {
	t.Helper()
	info, err := m.Open(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	waitPrompt(t, m, info.PaneID, info.TabID)
	return info
}

func waitPrompt(t testing.TB, m *terminal.Manager, pane, tab string) {
	t.Helper()
	c, err := m.WaitForCompletion(context.Background(), pane, tab, terminal.WaitOptions{Since: -1, Prompt: true, Timeout: 10 * time.Second})
	if err != nil || c.Reason != terminal.CompletedPrompt {
		text, _ := m.Tail(pane, tab, 20)
		t.Fatalf("no prompt: %+v, %v; screen:\n%s", c, err, text)
	}
}

// waitText waits until the stripped output since the last input matches re.
func waitText(t testing.TB, m *terminal.Manager, pane, tab, re string) string {
	t.Helper()
	c, err := m.WaitForCompletion(context.Background(), pane, tab, terminal.WaitOptions{Since: 0,
		Pattern: regexp.MustCompile(re), Timeout: 10 * time.Second})
	if err != nil || c.Reason != terminal.CompletedPattern {
		text, _ := m.Tail(pane, tab, 30)
		t.Fatalf("waiting for %q: %+v, %v; screen:\n%s", re, c, err, text)
	}
	return c.Match
}

// run types a command line and waits for the prompt after it.
func run(t testing.TB, m *terminal.Manager, pane, tab, line string) {
	t.Helper()
	st, err := m.Status(pane, tab)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Write(pane, tab, []byte(line+"\r")); err != nil {
		t.Fatal(err)
	}
	c, err := m.WaitForCompletion(context.Background(), pane, tab, terminal.WaitOptions{Since: st.Cursor, Prompt: true, Timeout: 10 * time.Second})
	if err != nil || c.Reason != terminal.CompletedPrompt {
		text, _ := m.Tail(pane, tab, 20)
		t.Fatalf("%q did not finish: %+v, %v; screen:\n%s", line, c, err, text)
	}
}

// collector drains a viewer channel into a buffer the test can wait on.
type collector struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	chunks  int
	resyncs []terminal.Chunk
	done    chan struct{}
	changed chan struct{}
}

func collect(out <-chan terminal.Chunk) *collector {
	c := &collector{done: make(chan struct{}), changed: make(chan struct{}, 1)}
	go func() {
		defer close(c.done)
		for ch := range out {
			c.mu.Lock()
			c.chunks++
			if ch.Resync {
				c.resyncs = append(c.resyncs, ch)
				c.buf.Reset()
			}
			c.buf.Write(ch.Data)
			c.mu.Unlock()
			select {
			case c.changed <- struct{}{}:
			default:
			}
		}
	}()
	return c
}

func (c *collector) text() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

// since returns what arrived from offset from on (the whole text after a resync reset it),
// and the offset to pass next. Looking only at what is new keeps a waiting test from copying
// megabytes under the lock the collecting goroutine needs, which would make it fall behind.
func (c *collector) since(from, resyncs int) ([]byte, int, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b := c.buf.Bytes()
	if from > len(b) || resyncs != len(c.resyncs) {
		from = 0 // a resync started the text over
	}
	return append([]byte(nil), b[from:]...), len(b), len(c.resyncs)
}

func (c *collector) waitFor(t testing.TB, s string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	// The window searched overlaps the previous one, so a match (or an escape sequence)
	// split across two chunks is still found.
	overlap := len(s) + 256
	seen, resyncs := 0, 0
	found := func() bool {
		var chunk []byte
		chunk, seen, resyncs = c.since(max(0, seen-overlap), resyncs)
		return strings.Contains(terminal.Strip(chunk), s)
	}
	for !found() {
		select {
		case <-c.changed:
		case <-c.done:
			if !strings.Contains(terminal.Strip([]byte(c.text())), s) {
				t.Fatalf("viewer closed before %q arrived; got:\n%s", s, terminal.Strip([]byte(c.text())))
			}
		case <-deadline:
			t.Fatalf("viewer never got %q; got:\n%s", s, terminal.Strip([]byte(c.text())))
		}
	}
}

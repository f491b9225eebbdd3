package terminal_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/terminal"
)

// screenAfter runs script in a new tab, waits until it printed DONE-MARK at the end of its
// output (read raw through Attach, so the screen is not read before), then reads the screen
// once and says how long that took.
func screenAfter(t *testing.T, agent, script string) (terminal.Screen, time.Duration) {
	t.Helper()
	m := newManager(t, terminal.Options{})
	const pane = "pane-5c3ee0000001"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := m.Open(ctx, terminal.Spec{PaneID: pane, Dir: t.TempDir(), Cols: 80, Rows: 24, Agent: agent,
		Command: []string{"bash", "-c", script + "; printf 'DONE-%s' MARK; exec sleep 60"}}); err != nil {
		t.Fatal(err)
	}
	_, out, err := m.Attach(ctx, pane, "")
	if err != nil {
		t.Fatal(err)
	}
	var tail string
	for deadline := time.After(20 * time.Second); !strings.Contains(tail, "DONE-MARK"); {
		select {
		case c := <-out:
			tail = tail[max(len(tail)-16, 0):] + string(c.Data)
		case <-deadline:
			t.Fatal("the script did not finish within 20 s")
		}
	}
	start := time.Now()
	sc, err := m.Screen(pane, "")
	if err != nil {
		t.Fatal(err)
	}
	return sc, time.Since(start)
}

// An agent CLI that redraws in place for a long time without being read (its spinner)
// keeps what it drew once: its screen replays all of it, however many bytes.
func TestScreenReplaysALongRedrawInPlace(t *testing.T) {
	t.Parallel()
	sc, took := screenAfter(t, "claude", `printf '\033[2J\033[10;1HDRAWN-ONCE'; for i in $(seq 4000); do printf '\033[1;1H\033[2Kframe %d' $i; done`)
	if got := sc.Row(9); got != "DRAWN-ONCE" {
		t.Errorf("row 10 = %q, want DRAWN-ONCE (drawn before 4,000 frames redrawn in place)", got)
	}
	if got := sc.Row(0); !strings.HasPrefix(got, "frame 4000") {
		t.Errorf("row 1 = %q, want the last frame", got)
	}
	t.Logf("replayed about %d KB of redraws in %v", 4000*18/1000, took)
}

// A flood nobody read costs a read little: the screen shows its last lines.
func TestScreenSkipsAFloodToItsLastLines(t *testing.T) {
	t.Parallel()
	sc, took := screenAfter(t, "", `seq 1 300000`)
	rows := sc.ScreenRows()
	if len(rows) < 2 || rows[len(rows)-2] != "300000" {
		t.Errorf("the screen ends %q, want 300000 above the mark", rows[max(len(rows)-3, 0):])
	}
	if took > time.Second {
		t.Errorf("reading the screen after a 2 MB flood took %v", took)
	}
	t.Logf("read after the flood in %v", took)
}

// A program's queries (cursor position, device attributes) make the emulator reply; the
// replies are drained, so reading the screen does not block on them.
func TestScreenDoesNotBlockOnQueries(t *testing.T) {
	t.Parallel()
	sc, _ := screenAfter(t, "", `for i in $(seq 200); do printf '\033[6n\033[c\033[>c\033[?u'; done; echo queried`)
	if rows := sc.ScreenRows(); len(rows) < 2 || rows[len(rows)-2] != "queried" {
		t.Errorf("the screen after the queries: %q", rows)
	}
}

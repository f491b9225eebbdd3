package terminal_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/pubsub"
	"github.com/clusterspace/clusterspace/backend/pubsub/pubsubtest"
	"github.com/clusterspace/clusterspace/backend/terminal"
)

// Not parallel: stability is about 300 ms of quiet, and the flood in the slow-viewer test
// running alongside could starve a shell that long on a two-core machine.
func TestCompletionByPromptStabilityAndTimeout(t *testing.T) {
	m := newManager(t, terminal.Options{})
	tab := openBash(t, m, bashSpec(t, "pane-c0mp1e7e0000"))
	wait := func(line string, w terminal.WaitOptions) terminal.Completion {
		st, _ := m.Status(tab.PaneID, "")
		if err := m.Write(tab.PaneID, "", []byte(line+"\r")); err != nil {
			t.Fatal(err)
		}
		w.Since = st.Cursor
		c, err := m.WaitForCompletion(context.Background(), tab.PaneID, "", w)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	shell := terminal.WaitOptions{Prompt: true, Stable: terminal.StableAfter, Timeout: 5 * time.Second}

	// The reason says the prompt, not settled output, ended the wait (a timing check here
	// failed on a machine busy with the race detector).
	if c := wait("echo hello-$((6*7))", shell); c.Reason != terminal.CompletedPrompt {
		t.Fatalf("echo: %+v", c)
	}
	if text, _ := m.Tail(tab.PaneID, "", 5); !strings.Contains(text, "hello-42") {
		t.Fatalf("tail %q", text)
	}

	// cat waits for input and prints nothing: no prompt, but the output settles.
	if c := wait("cat", shell); c.Reason != terminal.CompletedStable {
		t.Fatalf("cat: %+v", c)
	}
	st, _ := m.Status(tab.PaneID, "")
	if st.AtPrompt || st.Foreground != "cat" {
		t.Fatalf("while cat runs: %+v", st)
	}
	ctrlD, _ := terminal.KeySequence("ctrl+d")
	m.Write(tab.PaneID, "", ctrlD)
	waitPrompt(t, m, tab.PaneID, "")

	// Output every 50 ms never settles and never shows a prompt: the timeout ends the wait.
	// (read -t waits in bash itself: a fork per tick could stall on a busy machine; the
	// stability window is a second so that even a loaded machine's gaps do not settle it.)
	start := time.Now()
	c := wait("while :; do echo tick $((i++)); read -t 0.05 -u 9; done 9< <(sleep 60)", terminal.WaitOptions{Prompt: true,
		Stable: time.Second, Timeout: 2500 * time.Millisecond})
	if c.Reason != terminal.CompletedTimeout || time.Since(start) < 2500*time.Millisecond {
		t.Fatalf("long command: %+v after %v", c, time.Since(start))
	}
	ctrlC, _ := terminal.KeySequence("ctrl+c")
	m.Write(tab.PaneID, "", ctrlC)
	waitPrompt(t, m, tab.PaneID, "")

	// A pattern ends the wait as soon as it shows.
	c = wait("sleep 0.3; echo build-$((1+1))-done; sleep 5", terminal.WaitOptions{
		Pattern: regexp.MustCompile(`build-\d-done`), Timeout: 5 * time.Second})
	if c.Reason != terminal.CompletedPattern || c.Match != "build-2-done" {
		t.Fatalf("pattern: %+v", c)
	}
	m.Write(tab.PaneID, "", ctrlC)
}

// With Input, a wait leaves out the echo of what was typed: a pattern that also occurs in the
// command line, even one that wraps in a narrow pane, waits for the command to print it, and
// a prompt counts only after the last of several lines typed at once.
func TestWaitLeavesOutTheEchoOfTheInput(t *testing.T) {
	t.Parallel()
	m := newManager(t, terminal.Options{})
	spec := bashSpec(t, "pane-ec40000e0000")
	spec.Cols = 40
	tab := openBash(t, m, spec)
	waitFor := func(w terminal.WaitOptions) terminal.Completion {
		t.Helper()
		st, err := m.Status(tab.PaneID, "")
		if err != nil {
			t.Fatal(err)
		}
		w.Since, w.Input, w.Timeout = st.InputMark, st.LastInput, 10*time.Second
		c, err := m.WaitForCompletion(context.Background(), tab.PaneID, "", w)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}

	line := "sleep 1; echo " + strings.Repeat("z", 60) + " ECHOED"
	start := time.Now()
	if err := m.Write(tab.PaneID, "", []byte(line+"\r")); err != nil {
		t.Fatal(err)
	}
	c := waitFor(terminal.WaitOptions{Pattern: regexp.MustCompile(`z+ ECHOED`)})
	if took := time.Since(start); took < 900*time.Millisecond || c.Reason != terminal.CompletedPattern ||
		c.Line != strings.Repeat("z", 60)+" ECHOED" {
		t.Fatalf("after %v: %+v (the command sleeps 1 s before printing)", took, c)
	}
	waitPrompt(t, m, tab.PaneID, "")

	m.Write(tab.PaneID, "", []byte("sleep 0.5; echo one-$((0+1))\rsleep 0.5; echo two-$((1+1))\r"))
	if c := waitFor(terminal.WaitOptions{Prompt: true}); c.Reason != terminal.CompletedPrompt {
		t.Fatalf("several lines: %+v", c)
	}
	if text, _ := m.Tail(tab.PaneID, "", 5); !strings.Contains(text, "two-2") {
		t.Fatalf("the prompt after the first line ended the wait:\n%s", text)
	}
}

func TestScrollbackReplayAfterDetach(t *testing.T) {
	t.Parallel()
	m := newManager(t, terminal.Options{})
	tab := openBash(t, m, bashSpec(t, "pane-5c7011bac000"))

	ctx, detach := context.WithCancel(context.Background())
	replay, out, err := m.Attach(ctx, tab.PaneID, "")
	if err != nil {
		t.Fatal(err)
	}
	if !terminal.LooksLikePrompt(strings.TrimSpace(terminal.Strip(replay)) + " ") {
		t.Errorf("the first replay should show the prompt: %q", terminal.Strip(replay))
	}
	live := collect(out)
	m.Write(tab.PaneID, "", []byte("echo first-$((1+1))\r"))
	live.waitFor(t, "first-2")
	// Type the next command only once the shell shows its prompt again, as a person would:
	// typed earlier, it is echoed before that prompt, which then reads as its completion.
	for deadline := time.Now().Add(10 * time.Second); !terminal.LooksLikePrompt(strings.TrimSpace(terminal.Strip([]byte(live.text()))) + " "); {
		if time.Now().After(deadline) {
			t.Fatalf("no prompt after first-2: %q", live.text())
		}
		time.Sleep(10 * time.Millisecond)
	}
	detach()
	<-live.done // the channel closes when the viewer's context ends

	// The process keeps running with nobody watching.
	run(t, m, tab.PaneID, "", "echo second-$((2+1))")

	replay, out, err = m.Attach(context.Background(), tab.PaneID, "")
	if err != nil {
		t.Fatal(err)
	}
	text := terminal.Strip(replay)
	if !strings.Contains(text, "first-2") || !strings.Contains(text, "second-3") {
		t.Fatalf("replay after detach lacks output:\n%s", text)
	}
	again := collect(out)
	m.Write(tab.PaneID, "", []byte("echo third-$((3+1))\r"))
	again.waitFor(t, "third-4")
	if strings.Contains(again.text(), "second-3") {
		t.Fatal("live output repeated what the replay already had")
	}
}

func TestResizeReachesTheProgram(t *testing.T) {
	t.Parallel()
	m := newManager(t, terminal.Options{})
	spec := bashSpec(t, "pane-512e00000000")
	spec.Cols, spec.Rows = 100, 30
	tab := openBash(t, m, spec)
	run(t, m, tab.PaneID, "", "stty size")
	if text, _ := m.Tail(tab.PaneID, "", 3); !strings.Contains(text, "30 100") {
		t.Fatalf("initial size: %q", text)
	}
	if err := m.Resize(tab.PaneID, "", 132, 43); err != nil {
		t.Fatal(err)
	}
	run(t, m, tab.PaneID, "", "stty size")
	if text, _ := m.Tail(tab.PaneID, "", 3); !strings.Contains(text, "43 132") {
		t.Fatalf("after resize: %q", text)
	}
	if info := m.Tabs(tab.PaneID)[0]; info.Cols != 132 || info.Rows != 43 {
		t.Fatalf("tab info %+v", info)
	}
	if err := m.Resize(tab.PaneID, "", 0, 10); !errors.Is(err, terminal.ErrBadSize) {
		t.Fatalf("resize to 0 columns: %v", err)
	}
}

func TestBroadcastReachesIncludedPanesOnly(t *testing.T) {
	t.Parallel()
	m := newManager(t, terminal.Options{})
	a := openBash(t, m, bashSpec(t, "pane-aaaaaaaa0001"))
	b := openBash(t, m, bashSpec(t, "pane-bbbbbbbb0002"))
	c := openBash(t, m, bashSpec(t, "pane-cccccccc0003"))
	workspace := []string{a.PaneID, b.PaneID, c.PaneID}
	m.SetBroadcast(a.PaneID, true)
	m.SetBroadcast(b.PaneID, true)
	if !m.Broadcasting(a.PaneID) || m.Broadcasting(c.PaneID) {
		t.Fatal("broadcast flags")
	}
	if err := m.WriteBroadcast(a.PaneID, workspace, []byte("echo to-all-$((5*5))\r")); err != nil {
		t.Fatal(err)
	}
	waitText(t, m, a.PaneID, "", `to-all-25`)
	waitText(t, m, b.PaneID, "", `to-all-25`)
	run(t, m, c.PaneID, "", "echo c-is-alone")
	if text, _ := m.Tail(c.PaneID, "", 50); strings.Contains(text, "to-all") {
		t.Fatalf("a pane outside the broadcast got the input:\n%s", text)
	}
	// Typing in a pane that is not in the broadcast goes to that pane only.
	m.WriteBroadcast(c.PaneID, workspace, []byte("echo only-c-$((2*2))\r"))
	waitText(t, m, c.PaneID, "", `only-c-4`)
	m.SetBroadcast(b.PaneID, false)
	m.WriteBroadcast(a.PaneID, workspace, []byte("echo after-$((3*3))\r"))
	waitText(t, m, a.PaneID, "", `after-9`)
	run(t, m, b.PaneID, "", "true")
	if text, _ := m.Tail(b.PaneID, "", 50); strings.Contains(text, "after-9") {
		t.Fatal("a pane taken out of the broadcast still got input")
	}
}

func TestRestartAfterExit(t *testing.T) {
	t.Parallel()
	m := newManager(t, terminal.Options{})
	events := m.Events().Subscribe(t.Context())
	tab := openBash(t, m, bashSpec(t, "pane-2e57a2700000"))
	expectEvent(t, events, terminal.EventOpened, func(e terminal.Event) bool { return e.Tab.Running })

	m.Write(tab.PaneID, "", []byte("exit 3\r"))
	ev := expectEvent(t, events, terminal.EventExited, nil)
	if ev.Tab.Running || ev.Tab.ExitCode == nil || *ev.Tab.ExitCode != 3 {
		t.Fatalf("exit event %+v", ev.Tab)
	}
	if text, _ := m.Tail(tab.PaneID, "", 3); !strings.Contains(text, "[process exited with code 3]") {
		t.Fatalf("the exit is not shown: %q", text)
	}
	err := m.Write(tab.PaneID, "", []byte("echo hi\r"))
	if !errors.Is(err, terminal.ErrExited) || !strings.Contains(err.Error(), "code 3") {
		t.Fatalf("writing to an exited shell: %v", err)
	}

	if err := m.Restart(context.Background(), tab.PaneID, ""); err != nil {
		t.Fatal(err)
	}
	expectEvent(t, events, terminal.EventRestarted, func(e terminal.Event) bool { return e.Tab.Running && e.Tab.ExitCode == nil })
	waitPrompt(t, m, tab.PaneID, "")
	run(t, m, tab.PaneID, "", "echo back-$((4+4))")
	text, _ := m.Tail(tab.PaneID, "", 40)
	if !strings.Contains(text, "back-8") || !strings.Contains(text, "[process exited with code 3]") {
		t.Fatalf("after restart the new output and the old scrollback should both show:\n%s", text)
	}

	// Restarting a running shell replaces it.
	before := m.Tabs(tab.PaneID)[0].PID
	if err := m.Restart(context.Background(), tab.PaneID, tab.TabID); err != nil {
		t.Fatal(err)
	}
	waitPrompt(t, m, tab.PaneID, "")
	if after := m.Tabs(tab.PaneID)[0].PID; after == before || after == 0 {
		t.Fatalf("pid %d → %d", before, after)
	}
}

// expectEvent waits for an event of kind whose tab satisfies ok (nil: any).
func expectEvent(t *testing.T, ch <-chan pubsub.Event[terminal.Event], kind string, ok func(terminal.Event) bool) terminal.Event {
	t.Helper()
	return pubsubtest.Wait(t, ch, kind, 10*time.Second, ok)
}

func TestSlowViewerIsDroppedAndResynced(t *testing.T) {
	t.Parallel()
	m := newManager(t, terminal.Options{})
	tab := openBash(t, m, bashSpec(t, "pane-510e00000000"))
	_, slowOut, err := m.Attach(context.Background(), tab.PaneID, "")
	if err != nil {
		t.Fatal(err)
	}
	_, fastOut, err := m.Attach(context.Background(), tab.PaneID, "")
	if err != nil {
		t.Fatal(err)
	}
	fast := collect(fastOut)

	// About 3.4 MB of output (over 2× the lag limit plus the queued chunks) while the slow
	// viewer reads nothing: the PTY must keep flowing.
	start := time.Now()
	m.Write(tab.PaneID, "", []byte("seq 1 500000; echo flood-$((1+1))-over\r"))
	fast.waitFor(t, "flood-2-over")
	waitPrompt(t, m, tab.PaneID, "")
	t.Logf("3.4 MB through the PTY in %v with a stalled viewer", time.Since(start))

	slow := collect(slowOut)
	slow.waitFor(t, "flood-2-over")
	slow.mu.Lock()
	resyncs := slow.resyncs
	slow.mu.Unlock()
	if len(resyncs) == 0 {
		t.Fatal("the stalled viewer was never resynchronised")
	}
	if !strings.HasPrefix(string(resyncs[0].Data), terminal.ResyncMarker) {
		t.Fatalf("a resync must start with the visible marker: %q", resyncs[0].Data[:80])
	}
	if !strings.Contains(terminal.Strip(resyncs[len(resyncs)-1].Data), "fell behind") {
		t.Fatal("the marker is not visible text")
	}
	fast.mu.Lock()
	fastResyncs, chunks := len(fast.resyncs), fast.chunks
	fast.mu.Unlock()
	if fastResyncs != 0 {
		t.Fatalf("a viewer that kept up was resynchronised %d times", fastResyncs)
	}
	if chunks > 1200 {
		t.Errorf("%d chunks for 3.4 MB: output is not batched", chunks)
	}
}

// A person typing at a prompt sees each key's echo at once: the output that follows typed input
// is handed to the viewer as soon as it arrives, not held until the output has been quiet for a
// while (the batching that suits a fast stream). Keys come a few ms apart, closer than a frame,
// as when typing fast; without the rule every echo waited out the quiet gap (1 ms) first.
func TestEchoOfTypedKeysIsNotHeldForQuiet(t *testing.T) {
	m := newManager(t, terminal.Options{})
	tab := openBash(t, m, bashSpec(t, "pane-echo1"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, out, err := m.Attach(ctx, tab.PaneID, "")
	if err != nil {
		t.Fatal(err)
	}
	const keys = 40
	var took []time.Duration
	for i := range keys {
		key, want := []byte("x"), []byte("x")
		if i%2 == 1 {
			key, want = []byte{0x7f}, []byte("\b") // readline rubs out with a backspace
		}
		start := time.Now()
		if err := m.Write(tab.PaneID, "", key); err != nil {
			t.Fatal(err)
		}
		deadline := time.After(5 * time.Second)
	wait:
		for {
			select {
			case c := <-out:
				if bytes.Contains(c.Data, want) {
					break wait
				}
			case <-deadline:
				t.Fatalf("key %d: no echo in 5 s", i)
			}
		}
		took = append(took, time.Since(start))
		time.Sleep(4 * time.Millisecond)
	}
	slices.Sort(took)
	median := took[len(took)/2]
	t.Logf("echo after a typed key: median %v, slowest %v", median, took[len(took)-1])
	if median >= time.Millisecond {
		t.Errorf("the median echo took %v: typed keys' echoes are being held for the quiet gap", median)
	}
}

func TestTabsPanesAndEvents(t *testing.T) {
	t.Parallel()
	m := newManager(t, terminal.Options{})
	events := m.Events().Subscribe(t.Context())
	spec := bashSpec(t, "pane-7ab5000000aa")
	spec.Env = append(spec.Env, `PROMPT_COMMAND=printf '\033]0;title-%s\007' "$((20+1))"`)
	first, err := m.Ensure(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	again, err := m.Ensure(context.Background(), spec)
	if err != nil || again.TabID != first.TabID {
		t.Fatalf("Ensure opened a second tab: %+v, %v", again, err)
	}
	expectEvent(t, events, terminal.EventTitle, func(e terminal.Event) bool { return e.Tab.Title == "title-21" })

	second := openBash(t, m, spec)
	tabs := m.Tabs(spec.PaneID)
	if len(tabs) != 2 || tabs[0].TabID != first.TabID || !tabs[1].Active || tabs[0].Active {
		t.Fatalf("tabs %+v", tabs)
	}
	run(t, m, spec.PaneID, "", "echo in-second") // "" is the active tab: the new one
	if text, _ := m.Tail(spec.PaneID, second.TabID, 5); !strings.Contains(text, "in-second") {
		t.Fatal("tab \"\" did not reach the active tab")
	}
	if err := m.SetActive(spec.PaneID, first.TabID); err != nil {
		t.Fatal(err)
	}
	if err := m.CloseTab(spec.PaneID, first.TabID); err != nil {
		t.Fatal(err)
	}
	expectEvent(t, events, terminal.EventClosed, func(e terminal.Event) bool { return e.Tab.TabID == first.TabID })
	if tabs := m.Tabs(spec.PaneID); len(tabs) != 1 || tabs[0].TabID != second.TabID || !tabs[0].Active {
		t.Fatalf("after closing the active tab: %+v", tabs)
	}
	if _, err := m.Status(spec.PaneID, first.TabID); !errors.Is(err, terminal.ErrNoTab) {
		t.Fatalf("closed tab: %v", err)
	}
	pid := second.PID
	if err := m.ClosePane(spec.PaneID); err != nil {
		t.Fatal(err)
	}
	if err := m.ClosePane("pane-never-had-a-terminal"); err != nil {
		t.Fatalf("closing a pane without terminals: %v", err)
	}
	if err := m.Write(spec.PaneID, "", []byte("x")); !errors.Is(err, terminal.ErrNoPane) {
		t.Fatalf("closed pane: %v", err)
	}
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil {
		t.Fatal("the shell outlived its pane")
	}
	if _, err := m.Open(context.Background(), terminal.Spec{PaneID: "p", Dir: "/no/such/dir"}); err == nil ||
		!strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("bad dir: %v", err)
	}
}

func TestShutdownEndsEverything(t *testing.T) {
	t.Parallel()
	m := terminal.NewManager(terminal.Options{})
	spec := bashSpec(t, "pane-5d0000000000")
	tab := openBash(t, m, spec)
	marker := filepath.Join(spec.Dir, "bg.pid")
	// A job that ignores SIGHUP and holds the terminal open must not pin the reader.
	run(t, m, tab.PaneID, "", "(trap '' HUP; exec sleep 60) & echo $! > "+marker+"; disown")
	_, out, err := m.Attach(context.Background(), tab.PaneID, "")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	m.Shutdown()
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("Shutdown took %v", took)
	}
	if _, ok := <-out; ok {
		for range out {
		}
	}
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", tab.PID)); err == nil {
		t.Fatal("the shell survived Shutdown")
	}
	if _, err := m.Open(context.Background(), spec); !errors.Is(err, terminal.ErrClosed) {
		t.Fatalf("Open after Shutdown: %v", err)
	}
	m.Shutdown() // twice is fine
	// The job that ignored SIGHUP outlives the terminal, as it would any terminal; clean it up.
	if b, err := os.ReadFile(marker); err == nil {
		var pid int
		if fmt.Sscan(string(b), &pid); pid > 0 {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// The broadcast flag is announced when it changes and reported with the pane's tabs, so a UI
// that reloads learns it.
func TestBroadcastFlagIsAnnouncedAndReported(t *testing.T) {
	m := terminal.NewManager(terminal.Options{})
	defer m.Shutdown()
	events := m.Events().Subscribe(t.Context())
	if _, err := m.Open(context.Background(), terminal.Spec{PaneID: "pane-b1"}); err != nil {
		t.Fatal(err)
	}
	m.SetBroadcast("pane-b1", true)
	m.SetBroadcast("pane-b1", true) // no change: no second event
	for ev := range events {
		if ev.Payload.Kind == terminal.EventBroadcast {
			if ev.Payload.Tab.PaneID != "pane-b1" || !ev.Payload.Tab.Broadcast {
				t.Fatalf("event %+v", ev.Payload)
			}
			break
		}
	}
	if tabs := m.Tabs("pane-b1"); len(tabs) != 1 || !tabs[0].Broadcast {
		t.Fatalf("tabs %+v", tabs)
	}
	m.SetBroadcast("pane-b1", false)
	if tabs := m.Tabs("pane-b1"); tabs[0].Broadcast {
		t.Fatal("flag still set")
	}
}

// A shell slow to read what was typed (a loaded machine; here one that reads after a second
// with echo off) has not settled just because nothing came back within StableAfter: the wait
// goes on until its output comes, and settles on that.
func TestStableWaitsForTheFirstOutputAfterTyping(t *testing.T) {
	t.Parallel()
	m := newManager(t, terminal.Options{})
	tab := openBash(t, m, bashSpec(t, "pane-51e070000000"))
	// Echo off, then nothing is read or printed for a second.
	if err := m.Write(tab.PaneID, "", []byte("stty -echo; sleep 1; read line; echo got-$line; stty echo\r")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // the command line's own echo has come and gone
	st, err := m.Status(tab.PaneID, "")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := m.Write(tab.PaneID, "", []byte("typed\r")); err != nil {
		t.Fatal(err)
	}
	c, err := m.WaitForCompletion(context.Background(), tab.PaneID, "", terminal.WaitOptions{
		Since: st.Cursor, Input: "typed\r", Stable: terminal.StableAfter, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	text, _ := m.Tail(tab.PaneID, "", 5)
	if took := time.Since(start); took < 900*time.Millisecond || !strings.Contains(text, "got-typed") {
		t.Fatalf("the wait settled after %v (%+v) before the command read the line:\n%s", took, c, text)
	}
}

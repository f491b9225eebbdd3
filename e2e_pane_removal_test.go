package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// childShells counts the serve process's live children that run a shell: one per terminal
// tab, read from /proc, apart from the app.
func childShells(ppid int) int {
	entries, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		f := strings.Fields(s[i+1:]) // state ppid …
		comm := s[strings.IndexByte(s, '(')+1 : i]
		if len(f) > 1 && f[0] != "Z" && f[1] == strconv.Itoa(ppid) && strings.HasSuffix(comm, "sh") {
			n++
		}
	}
	return n
}

// running reports whether a live process has exactly this command line.
func running(argv ...string) bool {
	want := strings.Join(argv, "\x00") + "\x00"
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && string(b) == want {
			if st, _ := os.ReadFile("/proc/" + e.Name() + "/stat"); !strings.Contains(string(st), ") Z ") {
				return true
			}
		}
	}
	return false
}

// Shrinking the grid over a pane whose shell runs a program asks first, listing what is
// busy; Cancel keeps everything, confirming ends the removed panes' shells and the program.
func TestGridShrinkAsksThenEndsTheRemovedShells(t *testing.T) {
	srv, ctx := openApp(t)
	state := readState(t, ctx)
	var bottom string
	for _, p := range state.Panes {
		if p.Row == "1" && p.Col == "0" {
			bottom = p.ID
		}
	}
	step(t, ctx, "wait for the four shells",
		waitJS(`document.querySelectorAll('[data-testid=terminal][data-ready=true]').length === 4`))
	pid := srv.cmd.Process.Pid
	waitFor(t, "four shells under serve", func() bool { return childShells(pid) == 4 })
	term := fmt.Sprintf(`[data-testid=terminal][data-pane-id=%q]`, bottom)
	step(t, ctx, "start a long program in a bottom pane",
		chromedp.Click(term),
		chromedp.SendKeys(term+` textarea`, "sleep 3017\r", chromedp.ByQuery))
	waitFor(t, "sleep 3017 to run", func() bool { return running("sleep", "3017") })

	step(t, ctx, "shrink to one row, see what is busy, cancel",
		pickOption(`[data-testid=grid-rows]`, "1"),
		chromedp.WaitVisible(`[data-testid=confirm-dialog] [data-testid=confirm-items]`),
		waitJS(`document.querySelector('[data-testid=confirm-items]').textContent.includes('sleep running')`))
	shot(t, ctx, "grid-shrink-busy")
	step(t, ctx, "cancel", chromedp.Click(`[data-testid=confirm-cancel]`),
		waitJS(`!document.querySelector('[data-testid=confirm-dialog]')`),
		waitJS(`document.querySelector('[data-testid=grid-rows]').value === '2'`))
	if got := readState(t, ctx); got.Rows != "2" || !running("sleep", "3017") || childShells(pid) != 4 {
		t.Fatalf("Cancel changed something: rows %s, sleep running %v, %d shells", got.Rows, running("sleep", "3017"), childShells(pid))
	}

	step(t, ctx, "shrink again and confirm",
		pickOption(`[data-testid=grid-rows]`, "1"),
		chromedp.WaitVisible(`[data-testid=confirm-dialog]`),
		chromedp.Click(`[data-testid=confirm-ok]`),
		waitJS(`document.querySelector('[data-testid=pane-grid]').dataset.rows === '1'`))
	waitFor(t, "the removed panes' processes to end", func() bool { return !running("sleep", "3017") && childShells(pid) == 2 })
	t.Logf("shells under serve: 4 before the 2×2 → 1×2 shrink, %d after", childShells(pid))
}

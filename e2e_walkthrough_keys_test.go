package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

// Issue #29's walkthrough by keyboard, in headless Chromium against `serve`: where focus starts
// and where it goes back, Ctrl+Shift+G, the agent's doors on the first screen, and a chat that
// asks before it types into the person's panes.

// focusInPane is a JavaScript expression: the pane (its id) whose terminal holds the keyboard,
// ” when focus is anywhere else.
const focusInPane = `(() => {
  const a = document.activeElement;
  const pane = a?.closest('[data-testid=pane]');
  return pane && a.closest('[data-testid=terminal]') ? pane.dataset.paneId : '';
})()`

// typeLine types text and Enter into whatever has the keyboard (no element is clicked first).
func typeLine(text string) chromedp.Action {
	return chromedp.Tasks{chromedp.KeyEvent(text), chromedp.KeyEvent(kb.Enter)}
}

// shellShows waits until the pane's terminal buffer holds want.
func shellShows(pane, want string) chromedp.Action {
	return waitJS(fmt.Sprintf(`(window.__clusterspaceTerminalText?.(%q) ?? '').includes(%q)`, pane, want))
}

// loggedInWithShells logs in and waits for every pane's shell to be on screen.
func loggedInWithShells(t *testing.T, ctx context.Context, url string) uiState {
	t.Helper()
	logIn(t, ctx, url, e2ePassword)
	step(t, ctx, "wait for the shells", waitJS(`(() => { const t = [...document.querySelectorAll('[data-testid=terminal]')];
		return t.length === 4 && t.every(e => e.dataset.ready === 'true'); })()`))
	return readState(t, ctx)
}

// TestWalkthroughKeysFocusStartsInAPane: right after login the keyboard is in a pane's
// terminal (the top-left one, none being focused yet), so what the person types reaches its
// shell without a click; the first screen names the agent's two doors with their keys.
func TestWalkthroughKeysFocusStartsInAPane(t *testing.T) {
	srv := startServe(t, t.TempDir(), e2ePassword)
	ctx := newBrowser(t)
	st := loggedInWithShells(t, ctx, srv.URL)
	first := st.Panes[0].ID
	for _, p := range st.Panes {
		if p.Row == "0" && p.Col == "0" {
			first = p.ID
		}
	}
	var inPane string
	step(t, ctx, "the keyboard is in a pane's terminal",
		chromedp.Poll(focusInPane+` || null`, &inPane, chromedp.WithPollingTimeout(10*time.Second), chromedp.WithPollingInterval(50*time.Millisecond)))
	if inPane != first {
		t.Fatalf("focus starts in pane %q, want the top-left pane %s", inPane, first)
	}
	step(t, ctx, "typing reaches the shell without a click",
		typeLine("echo typed-$((6*7))"),
		shellShows(first, "typed-42"))

	var ask, goal string
	step(t, ctx, "the first screen shows the agent's doors and their keys",
		chromedp.WaitVisible(`[data-testid=agent-ask]`),
		chromedp.WaitVisible(`[data-testid=agent-new-goal]`),
		chromedp.Text(`[data-testid=agent-ask]`, &ask),
		chromedp.Text(`[data-testid=agent-new-goal]`, &goal))
	if !strings.Contains(ask, "Ask the agent") || !strings.Contains(ask, "Ctrl+Shift+A") {
		t.Errorf("the chat's door reads %q; want \"Ask the agent\" with Ctrl+Shift+A", ask)
	}
	if !strings.Contains(goal, "New goal") || !strings.Contains(goal, "Ctrl+Shift+G") {
		t.Errorf("the goals' door reads %q; want \"New goal\" with Ctrl+Shift+G", goal)
	}
	shot(t, ctx, "walkthrough-keys-first-screen")
	axeCheck(t, ctx, "workspace", "")
}

// TestWalkthroughKeysEveryPanelByKeyboard: each dialog and panel opens by keyboard (its
// shortcut, or the palette), Esc closes it, and the keyboard is back in the pane it was in, so
// the next keys reach the shell. Ctrl+Shift+G opens New Goal with the focused pane picked; the
// Goal Dashboard has Ctrl+Shift+D.
func TestWalkthroughKeysEveryPanelByKeyboard(t *testing.T) {
	srv := startServe(t, t.TempDir(), e2ePassword)
	ctx := newBrowser(t)
	loggedInWithShells(t, ctx, srv.URL)

	// Focus moves to the top-right pane by keyboard: the pane the rest works from.
	var pane string
	step(t, ctx, "Alt+ArrowRight moves the keyboard to the next pane",
		chromedp.Poll(focusInPane+` || null`, &pane, chromedp.WithPollingTimeout(10*time.Second), chromedp.WithPollingInterval(50*time.Millisecond)),
		keys(kb.ArrowRight, input.ModifierAlt),
		waitJS(focusInPane+` !== '' && `+focusInPane+` !== `+jsString(pane)),
		chromedp.Evaluate(focusInPane, &pane))
	back := func(what string) {
		t.Helper()
		step(t, ctx, what+": Esc closes it and the keyboard is back in the pane",
			chromedp.KeyEvent(kb.Escape),
			waitJS(focusInPane+` === `+jsString(pane)))
	}
	palette := func(what, query string) chromedp.Action {
		return chromedp.Tasks{
			ctrlShift("p"),
			chromedp.WaitVisible(`[data-testid=palette-input]`),
			chromedp.KeyEvent(query),
			waitJS(fmt.Sprintf(`document.querySelector('[data-testid=palette-item][data-selected=true]')?.textContent.includes(%q)`, what)),
			chromedp.KeyEvent(kb.Enter),
		}
	}

	step(t, ctx, "Ctrl+, opens Settings", keys(",", input.ModifierCtrl), chromedp.WaitVisible(`[data-testid=settings]`))
	back("Settings")
	step(t, ctx, "Ctrl+Shift+P opens the palette", ctrlShift("p"), chromedp.WaitVisible(`[data-testid=palette-input]`))
	back("the palette")

	var picked, pickedText, label, chip string
	step(t, ctx, "Ctrl+Shift+G opens New Goal with the focused pane picked",
		ctrlShift("g"),
		chromedp.WaitVisible(`[data-testid=new-goal-dialog]`),
		waitJS(`document.activeElement?.closest('[data-testid=new-goal-dialog]') !== null`),
		chromedp.Evaluate(`document.querySelector('[data-testid=goal-pane-select]').value`, &picked),
		chromedp.Evaluate(`document.querySelector('[data-testid=goal-pane-select]').selectedOptions[0]?.textContent ?? ''`, &pickedText),
		chromedp.Evaluate(fmt.Sprintf(`document.querySelector(%q).dataset.label`, paneSel(pane)), &label),
		chromedp.Evaluate(fmt.Sprintf(`document.querySelector(%q).textContent`, paneSel(pane)+` [data-testid=pane-id]`), &chip))
	if picked != pane {
		t.Errorf("New Goal picked pane %q; the focused pane is %s", picked, pane)
	}
	// One handle for a pane everywhere: the header's label and id chip, the picker, and
	// list_panes' shown_as ("label (id)", backend/tools/workspace_test.go).
	if handle := label + " (" + pane + ")"; chip != pane || !strings.HasSuffix(pickedText, handle) {
		t.Errorf("the pane's header shows %q and id %q, the picker %q; want both to name it %q", label, chip, pickedText, handle)
	}
	if open, _ := jsBool(ctx, `!!document.querySelector('[data-testid=goal-dashboard]')`); open {
		t.Errorf("Ctrl+Shift+G opened the Goal Dashboard too: New Goal should open on its own")
	}
	axeCheck(t, ctx, "New Goal dialog", "[data-testid=new-goal-dialog]")
	back("New Goal")

	step(t, ctx, "Ctrl+Shift+D opens the Goal Dashboard", ctrlShift("d"), chromedp.WaitVisible(`[data-testid=goal-dashboard]`))
	back("the Goal Dashboard")
	step(t, ctx, "the palette opens the Fleet Dashboard", palette("Fleet Dashboard", "toggle fleet"), chromedp.WaitVisible(`[data-testid=fleet-dashboard]`))
	back("the Fleet Dashboard")
	step(t, ctx, "the palette opens the Fleet Composer", palette("Fleet Composer", "new fleet"), chromedp.WaitVisible(`[data-testid=fleet-composer]`))
	step(t, ctx, "Esc closes the composer, then the dashboard under it",
		chromedp.KeyEvent(kb.Escape),
		waitJS(`!document.querySelector('[data-testid=fleet-composer]')`))
	back("the Fleet Dashboard under the composer")

	step(t, ctx, "Ctrl+Shift+A opens the chat with its input focused",
		ctrlShift("a"),
		chromedp.WaitVisible(`[data-testid=chat-panel]`),
		waitJS(`document.activeElement?.dataset.testid === 'chat-input'`))
	axeCheck(t, ctx, "chat panel", "[data-testid=chat-panel]")
	back("the chat")

	step(t, ctx, "after all of it, typing still reaches the shell",
		typeLine("echo back-$((6*7))"),
		shellShows(pane, "back-42"))
}

// TestWalkthroughKeysChatAsksBeforeTyping: "what is running in my panes?" in a new
// conversation: the model's first write into a pane waits for the person (the approval card is
// shown, nothing is typed); "Allow for this chat" lets it run, and the next write goes through
// without asking.
func TestWalkthroughKeysChatAsksBeforeTyping(t *testing.T) {
	model := llmtest.New(t, llmtest.Script{})
	srv := startServe(t, t.TempDir(), e2ePassword)
	addScriptedProvider(t, srv, model)
	ctx := newBrowser(t)
	pane := loggedInWithShells(t, ctx, srv.URL).Panes[0].ID

	model.Push(
		llmtest.Calls(llmtest.Call("write_to_terminal", map[string]any{"pane_id": pane, "text": "echo asked-$((6*7))"})),
		llmtest.Calls(llmtest.Call("write_to_terminal", map[string]any{"pane_id": pane, "text": "echo unasked-$((7*8))"})),
		llmtest.Text("Both ran."),
	)
	card := chatSel(`[data-testid=approval-card][data-tool=write_to_terminal]`)
	step(t, ctx, "ask what runs in the panes: the first write waits for approval",
		ctrlShift("a"),
		chromedp.WaitVisible(chatSel(`[data-testid=chat-input]`)),
		sendChat("what is running in my panes?"),
		chromedp.WaitVisible(card, chromedp.ByQuery))
	shot(t, ctx, "walkthrough-keys-chat-asks")
	step(t, ctx, "nothing is typed while it waits", chromedp.Sleep(700))
	if text := readString(t, ctx, fmt.Sprintf(`window.__clusterspaceTerminalText(%q)`, pane)); strings.Contains(text, "asked-") {
		t.Fatalf("the chat typed into the pane before the person allowed it:\n%s", text)
	}
	// Every approval card that appears from now on is counted.
	step(t, ctx, "count the cards from here on", chromedp.Evaluate(`window.__cards = 0;
		new MutationObserver(ms => { for (const m of ms) for (const n of m.addedNodes)
			if (n.nodeType === 1 && (n.matches('[data-testid=approval-card]') || n.querySelector('[data-testid=approval-card]'))) window.__cards++; })
		.observe(document.body, {childList: true, subtree: true}); true`, nil))
	step(t, ctx, "allow it for this chat: both writes run",
		chromedp.Click(card+` [data-testid=approval-allow-goal]`, chromedp.ByQuery),
		shellShows(pane, "asked-42"),
		shellShows(pane, "unasked-56"),
		waitJS(`[...document.querySelectorAll('[data-testid=chat-text]')].some(e => e.textContent.includes('Both ran.'))`))
	if n, _ := jsNumber(ctx, `window.__cards`); n != 0 {
		t.Errorf("%v more approval cards appeared after \"Allow for this chat\"; the second write should not ask", n)
	}
}

func jsBool(ctx context.Context, expr string) (bool, error) {
	var v bool
	err := chromedp.Run(ctx, chromedp.Evaluate(expr, &v))
	return v, err
}

func jsNumber(ctx context.Context, expr string) (float64, error) {
	var v float64
	err := chromedp.Run(ctx, chromedp.Evaluate(expr, &v))
	return v, err
}

func readString(t *testing.T, ctx context.Context, expr string) string {
	t.Helper()
	var v string
	step(t, ctx, "read "+expr, chromedp.Evaluate(expr, &v))
	return v
}

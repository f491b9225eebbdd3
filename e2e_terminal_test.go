package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// terminalText reads a terminal pane's buffer through the view's test hook.
func terminalText(paneID string) string {
	return fmt.Sprintf(`(window.__clusterspaceTerminalText && window.__clusterspaceTerminalText(%q)) || ''`, paneID)
}

// TestTerminalPaneEndToEnd types into a real shell through the UI in headless Chromium
// against `clusterspace serve`, sees the output in the terminal's buffer, reloads the page,
// and finds the output replayed from the backend's scrollback.
func TestTerminalPaneEndToEnd(t *testing.T) {
	_, ctx := openApp(t)
	state := readState(t, ctx)
	pane := state.Panes[0].ID
	term := fmt.Sprintf(`[data-testid=terminal][data-pane-id=%q]`, pane)
	step(t, ctx, "wait for the terminal to be ready",
		chromedp.WaitVisible(term),
		waitJS(fmt.Sprintf(`document.querySelector(%q)?.dataset.ready === 'true'`, term)))
	// xterm takes keyboard input through its hidden textarea, as it does for a person.
	step(t, ctx, "type a command",
		chromedp.Click(term),
		chromedp.SendKeys(term+` textarea`, "echo hello-$((6*7))\r", chromedp.ByQuery),
		waitJS(fmt.Sprintf(`(%s).includes('hello-42')`, terminalText(pane))))
	shot(t, ctx, "terminal")
	// This Chromium draws WebGL with SwiftShader, on the CPU: there xterm's DOM renderer is the
	// faster, and the page must see that for itself (the served UI has no Go to ask).
	var renderer string
	step(t, ctx, "read the renderer", chromedp.Evaluate(fmt.Sprintf(`document.querySelector(%q).dataset.renderer`, term), &renderer))
	if renderer != "dom" {
		t.Fatalf("the terminal uses the %q renderer on a machine without a GPU, want dom", renderer)
	}
	// Its cursor does not blink there: the DOM renderer blinks by a CSS animation, which keeps
	// the page drawing frames, and Chromium holds every echo after a key until the next frame.
	var animations []string
	step(t, ctx, "list the page's animations", chromedp.Evaluate(`document.getAnimations().map((a) => a.animationName || String(a))`, &animations))
	if len(animations) > 0 {
		t.Fatalf("the focused terminal keeps the page animating (%v): each echo waits for a frame", animations)
	}
	step(t, ctx, "reload and find the output again",
		chromedp.Reload(),
		chromedp.WaitVisible(`[data-testid=app-ready]`),
		waitJS(fmt.Sprintf(`document.querySelector(%q)?.dataset.ready === 'true'`, term)),
		waitJS(fmt.Sprintf(`(%s).includes('hello-42')`, terminalText(pane))))
	var text string
	step(t, ctx, "read the buffer", chromedp.Evaluate(terminalText(pane), &text))
	if strings.Count(text, "hello-42") < 1 || !strings.Contains(text, "echo hello-$((6*7))") {
		t.Fatalf("terminal buffer after reload:\n%s", text)
	}
}

package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

// What a new user meets first, in headless Chromium against `serve`: with no provider the
// Goal Dashboard, the New Goal dialog and the chat say so up front with "Add provider"; the
// add form's "Test connection" lists the server's models before saving and a click picks
// one; the notices go once a provider is saved; a New Goal draft is not lost to Esc or
// Cancel; the status bar has a chat button and shows the palette's shortcut.
func TestFirstMinutesProviderNoticeTestBeforeSaveAndDraftKept(t *testing.T) {
	model := llmtest.New(t, llmtest.Script{Models: []string{"scripted-small", "scripted-large"}})
	_, ctx := openApp(t)

	step(t, ctx, "the status bar offers the chat and shows the palette's shortcut",
		waitJS(`(document.querySelector('[data-testid=status-palette]')?.textContent ?? '').includes('Ctrl+Shift+P')`),
		chromedp.Click(`[data-testid=status-chat]`),
		chromedp.WaitVisible(`[data-testid=chat-panel]`),
		chromedp.WaitVisible(`[data-testid=chat-panel] [data-testid=no-provider]`))
	step(t, ctx, "the favicon is inline", waitJS(`document.querySelector('link[rel=icon]')?.href.startsWith('data:image/svg+xml')`))
	openDashboard(t, ctx)
	step(t, ctx, "the dashboard says a provider is needed before any form",
		chromedp.WaitVisible(`[data-testid=goal-dashboard] [data-testid=no-provider]`),
		chromedp.Click(`[data-testid=goal-new]`),
		chromedp.WaitVisible(`[data-testid=new-goal-dialog] [data-testid=no-provider] [data-testid=add-provider]`))
	shot(t, ctx, "no-provider")

	// Esc on a dialog with content asks; "Keep editing" keeps every character.
	const text = "Write a long goal the user must not lose"
	step(t, ctx, "type a goal, press Esc, keep editing",
		chromedp.SendKeys(`[data-testid=goal-text-input]`, text),
		chromedp.KeyEvent(kb.Escape),
		chromedp.WaitVisible(`[data-testid=confirm-dialog]`),
		chromedp.Click(`[data-testid=confirm-cancel]`),
		waitJS(`!document.querySelector('[data-testid=confirm-dialog]')`),
		waitJS(fmt.Sprintf(`document.querySelector('[data-testid=goal-text-input]')?.value === %q`, text)))
	// Closing the dashboard over the dialog keeps the draft for the next New Goal.
	step(t, ctx, "close the dashboard over the dialog, open New Goal again",
		chromedp.KeyEvent("d", chromedp.KeyModifiers(input.ModifierCtrl|input.ModifierShift)),
		waitJS(`!document.querySelector('[data-testid=goal-dashboard]')`),
		chromedp.KeyEvent("d", chromedp.KeyModifiers(input.ModifierCtrl|input.ModifierShift)),
		chromedp.WaitVisible(`[data-testid=goal-dashboard]`),
		chromedp.Click(`[data-testid=goal-new]`),
		waitJS(fmt.Sprintf(`document.querySelector('[data-testid=goal-text-input]')?.value === %q`, text)))

	step(t, ctx, "Add provider from the dialog opens the add form",
		chromedp.Click(`[data-testid=new-goal-dialog] [data-testid=add-provider]`),
		chromedp.WaitVisible(`[data-testid=provider-form][data-mode=add]`))
	step(t, ctx, "Test connection before saving lists the models; a click picks one",
		chromedp.SendKeys(`[data-testid=provider-name]`, "Scripted"),
		chromedp.SendKeys(`[data-testid=provider-base-url]`, strings.Repeat(kb.Backspace, 60)+model.OpenAIURL()),
		chromedp.Click(`[data-testid=provider-form-test]`),
		waitJS(`document.querySelector('[data-testid=provider-form-test-result]')?.dataset.ok === 'true'`),
		waitJS(`document.querySelectorAll('[data-testid=provider-form-model]').length === 2`),
		waitJS(`document.querySelector('[data-testid=provider-form-test-result]').textContent.includes('lists 2 models')`),
		chromedp.Click(`[data-testid=provider-form-model][data-model=scripted-large]`),
		waitJS(`document.querySelector('[data-testid=provider-model]').value === 'scripted-large'`))
	shot(t, ctx, "provider-form-test")
	step(t, ctx, "save it; the notices go",
		chromedp.Click(`[data-testid=provider-save]`),
		chromedp.WaitVisible(rowSel("Scripted")),
		chromedp.Click(`[data-testid=settings-close]`),
		waitJS(`!document.querySelector('[data-testid=settings]')`),
		waitJS(`!document.querySelector('[data-testid=no-provider]')`))

	// Cancel with content asks too; Discard closes, and the next dialog starts empty.
	step(t, ctx, "Cancel asks, Discard closes",
		waitJS(fmt.Sprintf(`document.querySelector('[data-testid=goal-text-input]')?.value === %q`, text)),
		chromedp.Click(`[data-testid=goal-cancel]`),
		chromedp.WaitVisible(`[data-testid=confirm-dialog]`),
		chromedp.Click(`[data-testid=confirm-ok]`),
		waitJS(`!document.querySelector('[data-testid=new-goal-dialog]')`),
		chromedp.Click(`[data-testid=goal-new]`),
		waitJS(`document.querySelector('[data-testid=goal-text-input]')?.value === ''`),
		// An empty dialog closes on Esc without a question.
		chromedp.KeyEvent(kb.Escape),
		waitJS(`!document.querySelector('[data-testid=new-goal-dialog]') && !document.querySelector('[data-testid=confirm-dialog]')`))
}

// A new browser pane opens on a blank page with the cursor in its URL bar: the address can be
// typed at once.
func TestNewBrowserPaneFocusesItsURLBar(t *testing.T) {
	srv := startServe(t, t.TempDir(), e2ePassword)
	token, pane := makeBrowserPane(t, srv)
	// The keyboard starts in the workspace's focused pane (else the top-left one): this one.
	var list struct{ Workspaces []struct{ ID string } }
	apiCall(t, "GET", srv.URL+"/api/workspaces", token, nil, &list)
	apiCall(t, "PUT", srv.URL+"/api/workspaces/"+list.Workspaces[0].ID+"/focus", token, map[string]string{"paneId": pane}, nil)
	ctx := newBrowser(t)
	logIn(t, ctx, srv.URL, e2ePassword)
	step(t, ctx, "the URL bar of the new browser pane has the focus",
		waitJS(fmt.Sprintf(`document.activeElement?.dataset.testid === 'browser-url' && !!document.activeElement.closest('[data-pane-id=%q]')`, pane)))
}

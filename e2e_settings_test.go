package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

func rowSel(name string) string { return fmt.Sprintf(`[data-testid=provider-row][data-name=%q]`, name) }

// fillProvider fills the open provider form field by field, as a person types.
func fillProvider(t *testing.T, ctx context.Context, kindKey, name, baseURL, model, key string) {
	t.Helper()
	step(t, ctx, "fill the provider form "+name,
		chromedp.WaitVisible(`[data-testid=provider-form]`),
		chromedp.SendKeys(`[data-testid=provider-name]`, name),
		chromedp.SendKeys(`[data-testid=provider-kind]`, kindKey),
		chromedp.SendKeys(`[data-testid=provider-base-url]`, strings.Repeat(kb.Backspace, 60)+baseURL),
		chromedp.SendKeys(`[data-testid=provider-model]`, model),
		chromedp.SendKeys(`[data-testid=provider-api-key]`, key),
		chromedp.Click(`[data-testid=provider-save]`),
		waitJS(`!document.querySelector('[data-testid=provider-form]')`),
		chromedp.WaitVisible(rowSel(name)))
}

// TestSettingsProvidersEndToEnd adds two providers through Settings → Providers, tests each
// against the scripted model server (real HTTP, both protocols), sets the critic default, and
// checks that the API key reaches the model server and nowhere in the page.
func TestSettingsProvidersEndToEnd(t *testing.T) {
	const key = "sk-e2e-KEYCANARY-0123456789"
	model := llmtest.New(t, llmtest.Script{Models: []string{"scripted-small", "scripted-vision"}, APIKey: key})
	_, ctx := openApp(t)

	step(t, ctx, "open settings",
		chromedp.Click(`[data-testid=settings-open]`),
		chromedp.WaitVisible(`[data-testid=settings]`),
		chromedp.Click(`[data-testid=provider-add]`))
	// A wrong field first: the backend's message appears next to the field, nothing is saved.
	step(t, ctx, "save without a model",
		chromedp.SendKeys(`[data-testid=provider-name]`, "Broken"),
		chromedp.Click(`[data-testid=provider-save]`),
		waitJS(`(document.querySelector('[data-testid=field-error][data-field=model]')?.textContent ?? '').includes('must not be empty')`),
		chromedp.Click(`[data-testid=provider-cancel]`),
		waitJS(`document.querySelectorAll('[data-testid=provider-row]').length === 0`),
		chromedp.Click(`[data-testid=provider-add]`))

	fillProvider(t, ctx, "O", "Scripted OpenAI", model.OpenAIURL(), "scripted-small", key)
	step(t, ctx, "the first provider is both defaults, key masked",
		waitJS(fmt.Sprintf(`document.querySelector(%q).dataset.default === 'true' && document.querySelector(%q).dataset.critic === 'true'`, rowSel("Scripted OpenAI"), rowSel("Scripted OpenAI"))),
		waitJS(fmt.Sprintf(`document.querySelector('%s [data-testid=provider-key-hint]').textContent.includes('…6789')`, rowSel("Scripted OpenAI"))))
	step(t, ctx, "test the OpenAI-protocol provider",
		chromedp.Click(rowSel("Scripted OpenAI")+` [data-testid=provider-test]`),
		waitJS(fmt.Sprintf(`document.querySelector('%s [data-testid=provider-test-result]')?.dataset.ok === 'true'`, rowSel("Scripted OpenAI"))))

	step(t, ctx, "add an Anthropic-protocol provider", chromedp.Click(`[data-testid=provider-add]`))
	fillProvider(t, ctx, "A", "Scripted Anthropic", model.URL, "scripted-small", key)
	step(t, ctx, "test the Anthropic-protocol provider",
		chromedp.Click(rowSel("Scripted Anthropic")+` [data-testid=provider-test]`),
		waitJS(fmt.Sprintf(`document.querySelector('%s [data-testid=provider-test-result]')?.dataset.ok === 'true'`, rowSel("Scripted Anthropic"))))

	// Both protocols reached the model server with the key, each in its own header.
	var sawOpenAI, sawAnthropic bool
	for _, r := range model.Requests() {
		sawOpenAI = sawOpenAI || (strings.HasSuffix(r.Path, "/models") && r.Header.Get("Authorization") == "Bearer "+key)
		sawAnthropic = sawAnthropic || (strings.HasSuffix(r.Path, "/models") && r.Header.Get("X-Api-Key") == key)
	}
	if !sawOpenAI || !sawAnthropic {
		t.Fatalf("the model server did not get both protocols' model lists with the key (openai %v, anthropic %v)", sawOpenAI, sawAnthropic)
	}

	// The Anthropic one becomes the critic default.
	step(t, ctx, "choose the critic provider",
		chromedp.SendKeys(`[data-testid=critic-provider]`, "Scripted A"),
		waitJS(fmt.Sprintf(`document.querySelector(%q).dataset.critic === 'true' && document.querySelector(%q).dataset.critic === 'false'`, rowSel("Scripted Anthropic"), rowSel("Scripted OpenAI"))))

	step(t, ctx, "choose the default provider",
		chromedp.SendKeys(`[data-testid=default-provider]`, "Scripted A"),
		waitJS(fmt.Sprintf(`document.querySelector(%q).dataset.default === 'true' && document.querySelector(%q).dataset.default === 'false'`, rowSel("Scripted Anthropic"), rowSel("Scripted OpenAI"))),
		// Options are None, Scripted Anthropic, Scripted OpenAI: one step down is OpenAI again.
		// (Typing its name would join the select's type-ahead buffer of the first change.)
		chromedp.SendKeys(`[data-testid=default-provider]`, kb.ArrowDown),
		waitJS(fmt.Sprintf(`document.querySelector(%q).dataset.default === 'true'`, rowSel("Scripted OpenAI"))))

	// After a reload everything is still there, and the key is nowhere in the page.
	step(t, ctx, "reload and reopen settings",
		chromedp.Reload(), chromedp.WaitVisible(`[data-testid=app-ready]`),
		chromedp.Click(`[data-testid=settings-open]`),
		chromedp.WaitVisible(rowSel("Scripted Anthropic")),
		waitJS(fmt.Sprintf(`document.querySelector(%q).dataset.critic === 'true' && document.querySelector(%q).dataset.default === 'true'`, rowSel("Scripted Anthropic"), rowSel("Scripted OpenAI"))))
	shot(t, ctx, "settings-providers")
	var page string
	step(t, ctx, "read the page and its storage", chromedp.Evaluate(
		`document.documentElement.outerHTML + JSON.stringify(sessionStorage) + JSON.stringify(localStorage)`, &page))
	if strings.Contains(page, "KEYCANARY") {
		t.Fatal("the API key is in the page or its storage")
	}
	if !strings.Contains(page, "Scripted Anthropic") {
		t.Fatal("read the wrong page")
	}
}

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
		ctrlShift("d"),
		waitJS(`!document.querySelector('[data-testid=goal-dashboard]')`),
		ctrlShift("d"),
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

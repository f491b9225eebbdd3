package main

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

// TestChatConversationsEndToEnd: in one workspace, a second conversation started with "+ New"
// keeps its own history; the model typed into its settings is the model its request asks the
// scripted server for, while the first conversation keeps the provider's; switching back
// shows the first conversation as it was.
func TestChatConversationsEndToEnd(t *testing.T) {
	const (
		firstQ  = "What broke in the nightly build?"
		firstA  = "The linker ran out of memory."
		secondQ = "Draft the release notes."
		secondA = "Release notes: faster startup."
		picked  = "picked-model-xl"
	)
	model := llmtest.New(t, llmtest.Script{Replies: []llmtest.Reply{llmtest.Text(firstA), llmtest.Text(secondA)}})
	_, ctx := openChat(t, model)

	shown := `JSON.stringify([...document.querySelectorAll('[data-testid=chat-message]')].map(m => m.querySelector('[data-testid=chat-text]')?.textContent.trim()))`
	idle := waitJS(`document.querySelector('[data-testid=chat-panel]').dataset.running === 'false'`)

	step(t, ctx, "ask in the first conversation",
		sendChat(firstQ),
		waitJS(`[...document.querySelectorAll('[data-testid=chat-message][data-source=actor]')].some(m => m.textContent.includes('linker'))`),
		idle,
		waitJS(`document.querySelector('[data-testid=chat-conversation-title]').textContent === `+jsString(firstQ)))
	var first string
	step(t, ctx, "read the first conversation's id",
		chromedp.Evaluate(`document.querySelector('[data-testid=chat-panel]').dataset.conversation`, &first))

	step(t, ctx, "start a second conversation: the panel is empty",
		chromedp.Click(chatSel(`[data-testid=chat-new]`)),
		waitJS(`(() => { const id = document.querySelector('[data-testid=chat-panel]').dataset.conversation; return !!id && id !== `+jsString(first)+`; })()`),
		waitJS(`document.querySelectorAll('[data-testid=chat-message]').length === 0`),
		chromedp.WaitVisible(chatSel(`[data-testid=chat-empty]`)))

	step(t, ctx, "pick a model for it in its settings",
		chromedp.Click(chatSel(`[data-testid=chat-settings-toggle]`)),
		chromedp.WaitVisible(chatSel(`[data-testid=chat-model]`)),
		chromedp.SendKeys(chatSel(`[data-testid=chat-model]`), picked, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector('[data-testid=chat-model]').dispatchEvent(new Event('change', {bubbles: true}))`, nil),
		waitJS(`!document.querySelector('[data-testid=chat-model]').disabled && document.querySelector('[data-testid=chat-model]').value === `+jsString(picked)),
		waitJS(`!document.querySelector('[data-testid=chat-settings-error]')`))
	shot(t, ctx, "chat-conversations-model")
	step(t, ctx, "close the settings", chromedp.Click(chatSel(`[data-testid=chat-settings-toggle]`)))

	step(t, ctx, "ask in the second conversation",
		sendChat(secondQ),
		waitJS(`[...document.querySelectorAll('[data-testid=chat-message][data-source=actor]')].some(m => m.textContent.includes('Release notes'))`),
		idle)
	if got := readJS[[]string](t, ctx, "read the second conversation", shown); strings.Join(got, "|") != secondQ+"|"+secondA {
		t.Fatalf("the second conversation shows %q", got)
	}

	reqs := model.ChatRequests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	if reqs[0].Model != "scripted-model" || reqs[1].Model != picked {
		t.Fatalf("models asked for: %q then %q; want the provider's, then %q", reqs[0].Model, reqs[1].Model, picked)
	}
	if strings.Contains(string(reqs[1].Body), "nightly build") || reqs[0].CacheKey == reqs[1].CacheKey {
		t.Fatalf("the second conversation's request carried the first's history or cache key (%q)", reqs[1].CacheKey)
	}

	step(t, ctx, "switch back to the first conversation from the list",
		chromedp.Click(chatSel(`[data-testid=chat-conversation-toggle]`)),
		waitJS(`document.querySelectorAll('[data-testid=chat-conversation]').length === 2`),
		chromedp.Click(chatSel(`[data-testid=chat-conversation][data-id="`+first+`"] [data-testid=chat-conversation-pick]`)),
		waitJS(`document.querySelector('[data-testid=chat-panel]').dataset.conversation === `+jsString(first)),
		waitJS(`document.querySelectorAll('[data-testid=chat-message]').length === 2`))
	if got := readJS[[]string](t, ctx, "read the first conversation", shown); strings.Join(got, "|") != firstQ+"|"+firstA {
		t.Fatalf("the first conversation shows %q", got)
	}
	shot(t, ctx, "chat-conversations-list")
}

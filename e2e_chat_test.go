package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

// criticSystemMark is how the scripted server recognises the critic: the first words of its
// system prompt (backend/chat/prompts.go).
const criticSystemMark = "You are the critic in an actor"

// chatSel is a CSS selector inside the chat panel.
func chatSel(s string) string { return `[data-testid=chat-panel] ` + s }

// setUpChat logs in, adds the scripted server as the (default) provider in Settings, and opens
// the chat panel with Ctrl+Shift+A.
func setUpChat(t *testing.T, ctx context.Context, srvURL string, model *llmtest.Server) {
	t.Helper()
	logIn(t, ctx, srvURL, e2ePassword)
	step(t, ctx, "open settings", chromedp.Click(`[data-testid=settings-open]`), chromedp.Click(`[data-testid=provider-add]`))
	fillProvider(t, ctx, "O", "Scripted", model.OpenAIURL(), "scripted-model", "sk-chat-e2e")
	step(t, ctx, "close settings",
		chromedp.Click(`[data-testid=settings-close]`),
		waitJS(`!document.querySelector('[data-testid=settings]')`))
	step(t, ctx, "open the chat panel with Ctrl+Shift+A",
		ctrlShift("a"),
		chromedp.WaitVisible(chatSel(`[data-testid=chat-input]`)),
		waitJS(`document.querySelector('[data-testid=chat-empty]')?.textContent.includes('/critic')`))
}

// sendChat types a message into the chat input and presses Enter.
func sendChat(text string) chromedp.Action {
	return chromedp.Tasks{chromedp.SendKeys(chatSel(`[data-testid=chat-input]`), text, chromedp.ByQuery), pressEnter()}
}

// pressEnter presses Enter in the focused element as one keyDown carrying its text, the way a
// keyboard does: the page's keydown handler can prevent the newline. (chromedp's "\r" sends the
// text as a separate char event, which inserts a newline whatever the handler does.)
func pressEnter() chromedp.Action {
	return chromedp.ActionFunc(func(ctx context.Context) error {
		down := input.DispatchKeyEvent(input.KeyDown).WithKey("Enter").WithCode("Enter").
			WithWindowsVirtualKeyCode(13).WithNativeVirtualKeyCode(13).WithText("\r").WithUnmodifiedText("\r")
		if err := down.Do(ctx); err != nil {
			return err
		}
		return input.DispatchKeyEvent(input.KeyUp).WithKey("Enter").WithCode("Enter").
			WithWindowsVirtualKeyCode(13).WithNativeVirtualKeyCode(13).Do(ctx)
	})
}

// chatBadges is the badges of the shown messages, in order ("Critic: done" for the marker).
const chatBadges = `JSON.stringify([...document.querySelectorAll('[data-testid=chat-badge], [data-testid=chat-done-marker] > span:first-child')].map(e => e.textContent.trim()))`

func readJS[T any](t *testing.T, ctx context.Context, what, expr string) T {
	t.Helper()
	var raw string
	step(t, ctx, what, chromedp.Evaluate(expr, &raw))
	var v T
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		t.Fatalf("%s: %q: %v", what, raw, err)
	}
	return v
}

// TestChatCriticEndToEnd: /critic turns actor–critic mode on, and one instruction sets off
// actor answer → critic feedback → actor revision → critic /done, each shown with its badge as
// it streams; the loop then stops by itself, and the critic was asked with the history flipped.
func TestChatCriticEndToEnd(t *testing.T) {
	const (
		instructions = "Write a two-line poem about tea, with a title."
		draft        = "Steam curls from the cup, slowly rising in the quiet kitchen air"
		feedback     = "Add a title and a second line."
		revision     = "REVISED **Tea**: steam curls from the cup / warming the winter morning"
	)
	model := llmtest.New(t, llmtest.Script{
		Roles: []llmtest.Role{
			// The critic answers /done to the revision, and feedback to anything else.
			{Name: "critic-done", Match: llmtest.Match{System: criticSystemMark, LastUser: "REVISED"}, Reply: llmtest.Reply{Reasoning: "Title and two lines: done.", Text: "/done"}},
			{Name: "critic-feedback", Match: llmtest.Match{System: criticSystemMark}, Reply: llmtest.Text(feedback)},
		},
		Replies: []llmtest.Reply{
			// Slow enough for the page to show the reply while it streams.
			{Text: draft, Chunks: 8, ChunkDelayMs: 150},
			llmtest.Text(revision),
		},
	})
	_, ctx := openChat(t, model)

	step(t, ctx, "send /critic: the badge and the critic placeholder appear",
		sendChat("/critic"),
		waitJS(`document.querySelector('[data-testid=chat-critic-badge]')?.textContent === 'Critic mode active'`),
		waitJS(`document.querySelector('[data-testid=chat-input]').placeholder === 'Critic instructions…'`),
		waitJS(`document.querySelector('[data-testid=chat-input]').value === ''`))
	if n := len(model.ChatRequests()); n != 0 {
		t.Fatalf("/critic reached the model (%d requests): it should only toggle the mode", n)
	}

	step(t, ctx, "send the instructions: the actor's answer streams in, with Stop offered",
		sendChat(instructions),
		waitJS(`[...document.querySelectorAll('[data-testid=chat-message][data-source=user]')].some(m => m.textContent.includes('two-line poem'))`),
		waitJS(`(() => { const m = document.querySelector('[data-testid=chat-message][data-streaming=true][data-source=actor]');
			return !!m && m.textContent.includes('Steam') && !m.textContent.includes('kitchen air'); })()`),
		chromedp.WaitVisible(chatSel(`[data-testid=chat-stop]`)))
	shot(t, ctx, "chat-streaming")

	step(t, ctx, "the loop runs until the critic says /done, then stops",
		chromedp.WaitVisible(chatSel(`[data-testid=chat-done-marker]`)),
		waitJS(`!document.querySelector('[data-testid=chat-stop]')`),
		waitJS(`document.querySelector('[data-testid=chat-panel]').dataset.running === 'false'`),
		waitJS(`!document.querySelector('[data-testid=chat-message][data-streaming=true]')`))
	shot(t, ctx, "chat-critic-done")

	badges := readJS[[]string](t, ctx, "read the badges", chatBadges)
	if want := []string{"You", "Actor", "Critic", "Actor", "Critic: done"}; fmt.Sprint(badges) != fmt.Sprint(want) {
		t.Fatalf("messages shown: %q, want %q", badges, want)
	}
	texts := readJS[[]string](t, ctx, "read the messages",
		`JSON.stringify([...document.querySelectorAll('[data-testid=chat-message]')].map(m => m.dataset.source + ': ' + m.querySelector('[data-testid=chat-text]')?.textContent.trim()))`)
	want := []string{"user: " + instructions, "actor: " + draft, "critic: " + feedback, "actor: REVISED Tea: steam curls from the cup / warming the winter morning"}
	if fmt.Sprint(texts) != fmt.Sprint(want) {
		t.Fatalf("message texts:\n got %q\nwant %q", texts, want)
	}
	bold := readJS[string](t, ctx, "read the revision's bold text",
		`JSON.stringify([...document.querySelectorAll('[data-testid=chat-message][data-source=actor]')].at(-1).querySelector('[data-testid=chat-text] strong')?.textContent ?? '')`)
	if bold != "Tea" {
		t.Fatalf("bold text in the revision: %q", bold)
	}

	// The model server saw actor, critic, actor, critic; the critic reviewed with roles flipped.
	reqs := model.ChatRequests()
	var roles []string
	for _, r := range reqs {
		roles = append(roles, map[bool]string{true: "critic", false: "actor"}[strings.Contains(r.System, criticSystemMark)])
	}
	if fmt.Sprint(roles) != "[actor critic actor critic]" {
		t.Fatalf("model requests: %v", roles)
	}
	critic := reqs[3]
	if !strings.Contains(critic.System, "THE USER'S CRITERIA:\n"+instructions) {
		t.Errorf("the critic's system prompt lacks the user's criteria:\n%s", critic.System)
	}
	if tools, ok := critic.JSON["tools"].([]any); ok && len(tools) > 0 {
		t.Errorf("the critic was offered %d tools", len(tools))
	}
	got := requestMessages(critic)
	flipped := []string{"user: [The conversation under review follows", "assistant: " + instructions, "user: " + draft, "assistant: " + feedback, "user: " + revision}
	if len(got) != len(flipped) {
		t.Fatalf("critic request messages:\n got %q\nwant %q", got, flipped)
	}
	for i := range flipped {
		if !strings.HasPrefix(got[i], flipped[i]) {
			t.Fatalf("critic request message %d:\n got %q\nwant %q…", i, got[i], flipped[i])
		}
	}
	// The actor got the critic's feedback as the user's next message, followed only by the
	// per-turn state (the panes), which is marked as not from the user.
	actor := requestMessages(reqs[2])
	if n := len(actor); n < 2 || actor[n-2] != "user: "+feedback || !strings.HasPrefix(actor[n-1], "user: "+llm.ContextHeader) {
		t.Fatalf("the actor's revision request ends with %q", actor[max(0, n-2):])
	}
}

// requestMessages lists a recorded OpenAI-protocol request's non-system messages as "role: text".
func requestMessages(r llmtest.Request) []string {
	var out []string
	msgs, _ := r.JSON["messages"].([]any)
	for _, m := range msgs {
		msg, _ := m.(map[string]any)
		role, _ := msg["role"].(string)
		if role == "system" || role == "developer" {
			continue
		}
		var text string
		switch c := msg["content"].(type) {
		case string:
			text = c
		case []any:
			for _, p := range c {
				if part, ok := p.(map[string]any); ok && part["type"] == "text" {
					s, _ := part["text"].(string)
					text += s
				}
			}
		}
		out = append(out, role+": "+text)
	}
	return out
}

// TestChatToolCallEndToEnd: a plain chat whose answer runs one tool in a real terminal pane;
// the call shows collapsed, and opens to its arguments and its result.
func TestChatToolCallEndToEnd(t *testing.T) {
	model := llmtest.New(t, llmtest.Script{})
	_, ctx := openChat(t, model)

	// The tool types into the first pane's shell, once the UI has started it.
	pane := readState(t, ctx).Panes[0].ID
	term := fmt.Sprintf(`[data-testid=terminal][data-pane-id=%q]`, pane)
	step(t, ctx, "wait for the terminal", waitJS(fmt.Sprintf(`document.querySelector(%q)?.dataset.ready === 'true'`, term)))
	// This test is about how a tool run shows, not approvals: let the chat write without asking
	// (a new conversation asks first; e2e_walkthrough_keys_test.go covers that).
	step(t, ctx, "raise ask-above to write_local in the chat settings",
		chromedp.Click(chatSel(`[data-testid=chat-settings-toggle]`), chromedp.ByQuery),
		chromedp.WaitVisible(chatSel(`[data-testid=chat-ask-above]`), chromedp.ByQuery),
		chromedp.SetValue(chatSel(`[data-testid=chat-ask-above]`), "write_local", chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector('[data-testid=chat-ask-above]').dispatchEvent(new Event('change', {bubbles: true}))`, nil),
		waitJS(`document.querySelector('[data-testid=chat-ask-above]').value === 'write_local' && !document.querySelector('[data-testid=chat-ask-above]').disabled`),
		chromedp.Click(chatSel(`[data-testid=chat-settings-toggle]`), chromedp.ByQuery))
	model.Push(
		llmtest.Calls(llmtest.Call("write_to_terminal", map[string]any{"pane_id": pane, "text": "echo chat-$((6*7))"})),
		llmtest.Text("The shell printed `chat-42`."),
	)

	tool := chatSel(`[data-testid=chat-tool][data-tool=write_to_terminal]`)
	step(t, ctx, "ask: the answer runs one tool, shown collapsed",
		sendChat("Print chat-42 in the first terminal."),
		waitJS(`[...document.querySelectorAll('[data-testid=chat-message][data-source=actor] [data-testid=chat-text]')].some(e => e.textContent.includes('The shell printed chat-42'))`),
		waitJS(`!document.querySelector('[data-testid=chat-stop]')`),
		waitJS(fmt.Sprintf(`document.querySelector(%q)?.dataset.status === 'ok'`, tool)))
	var open bool
	var argsVisible bool
	step(t, ctx, "the tool call is collapsed",
		chromedp.Evaluate(fmt.Sprintf(`document.querySelector(%q).open`, tool), &open),
		chromedp.Evaluate(fmt.Sprintf(`document.querySelector('%s [data-testid=chat-tool-args]').checkVisibility()`, tool), &argsVisible))
	if open || argsVisible {
		t.Fatalf("the tool call should start collapsed (open %v, arguments visible %v)", open, argsVisible)
	}
	summary := readJS[string](t, ctx, "read the tool summary", fmt.Sprintf(`JSON.stringify(document.querySelector('%s [data-testid=chat-tool-summary]').textContent)`, tool))
	if !strings.Contains(summary, "write_to_terminal") || !strings.Contains(summary, "done") {
		t.Fatalf("tool summary: %q", summary)
	}

	var args, result string
	step(t, ctx, "expand the tool call",
		chromedp.Click(tool+` [data-testid=chat-tool-summary]`, chromedp.ByQuery),
		chromedp.WaitVisible(tool+` [data-testid=chat-tool-args]`, chromedp.ByQuery),
		chromedp.Text(tool+` [data-testid=chat-tool-args]`, &args, chromedp.ByQuery),
		chromedp.Text(tool+` [data-testid=chat-tool-result]`, &result, chromedp.ByQuery))
	shot(t, ctx, "chat-tool")
	if !strings.Contains(args, `"pane_id": "`+pane+`"`) || !strings.Contains(args, `"text": "echo chat-$((6*7))"`) {
		t.Fatalf("tool arguments shown:\n%s", args)
	}
	if !strings.Contains(result, "chat-42") {
		t.Fatalf("tool result shown (want the shell's chat-42):\n%s", result)
	}

	// The model got the tool's result back with the call it answered.
	reqs := model.ChatRequests()
	if len(reqs) != 2 {
		t.Fatalf("model requests: %d, want 2", len(reqs))
	}
	if body := string(reqs[1].Body); !strings.Contains(body, `"role":"tool"`) || !strings.Contains(body, "chat-42") {
		t.Fatalf("the second request does not carry the tool result:\n%s", body)
	}
	if strings.Contains(string(reqs[0].Body), criticSystemMark) {
		t.Fatal("a plain chat asked the critic")
	}
}

// TestChatStopEndToEnd: Stop ends a reply that hangs mid-stream within a second; what arrived is
// kept and marked cut off, and Resume continues the conversation.
func TestChatStopEndToEnd(t *testing.T) {
	model := llmtest.New(t, llmtest.Script{Replies: []llmtest.Reply{
		{Text: "A partial answer that never ends", Chunks: 4, Fault: &llmtest.Fault{Stall: true, StallAfter: 3}},
	}})
	_, ctx := openChat(t, model)

	step(t, ctx, "ask: the reply starts, then hangs",
		sendChat("Tell me everything."),
		waitJS(`document.querySelector('[data-testid=chat-message][data-streaming=true]')?.textContent.includes('partial')`),
		chromedp.WaitVisible(chatSel(`[data-testid=chat-stop]`)))
	start := time.Now()
	step(t, ctx, "stop it",
		chromedp.Click(chatSel(`[data-testid=chat-stop]`), chromedp.ByQuery),
		waitJS(`!document.querySelector('[data-testid=chat-stop]') && document.querySelector('[data-testid=chat-panel]').dataset.running === 'false'`))
	if took := time.Since(start); took > time.Second {
		t.Fatalf("the UI showed the stop after %v, want within a second", took)
	}
	step(t, ctx, "the cut-off reply is kept, and Resume is offered",
		waitJS(`document.querySelector('[data-testid=chat-message][data-source=actor][data-partial=true]')?.textContent.includes('cut off')`),
		waitJS(`(document.querySelector('[data-testid=chat-stopped]')?.textContent ?? '').includes('stopped by the user')`),
		chromedp.WaitVisible(chatSel(`[data-testid=chat-resume]`)))
	shot(t, ctx, "chat-stopped")

	model.Push(llmtest.Text("Resumed: here is the whole answer."))
	step(t, ctx, "resume",
		chromedp.Click(chatSel(`[data-testid=chat-resume]`), chromedp.ByQuery),
		waitJS(`[...document.querySelectorAll('[data-testid=chat-message][data-source=actor] [data-testid=chat-text]')].some(e => e.textContent.includes('Resumed: here is the whole answer.'))`),
		waitJS(`!document.querySelector('[data-testid=chat-stop]') && !document.querySelector('[data-testid=chat-resume]')`))
}

// TestChatApprovalEndToEnd: with "ask above" lowered to read_only in the chat settings, a tool
// that writes asks first, on the shared approval card in the panel; allowed once, it runs.
func TestChatApprovalEndToEnd(t *testing.T) {
	model := llmtest.New(t, llmtest.Script{})
	_, ctx := openChat(t, model)
	pane := readState(t, ctx).Panes[0].ID
	step(t, ctx, "wait for the terminal",
		waitJS(fmt.Sprintf(`document.querySelector('[data-testid=terminal][data-pane-id=%q]')?.dataset.ready === 'true'`, pane)))

	step(t, ctx, "lower ask-above to read_only in the chat settings",
		chromedp.Click(chatSel(`[data-testid=chat-settings-toggle]`), chromedp.ByQuery),
		chromedp.WaitVisible(chatSel(`[data-testid=chat-ask-above]`), chromedp.ByQuery),
		chromedp.SendKeys(chatSel(`[data-testid=chat-ask-above]`), "r", chromedp.ByQuery),
		waitJS(`document.querySelector('[data-testid=chat-ask-above]').value === 'read_only' && !document.querySelector('[data-testid=chat-ask-above]').disabled`),
		chromedp.Click(chatSel(`[data-testid=chat-settings-toggle]`), chromedp.ByQuery))

	model.Push(
		llmtest.Calls(llmtest.Call("write_to_terminal", map[string]any{"pane_id": pane, "text": "echo approved-$((6*7))"})),
		llmtest.Text("It ran after your approval."),
	)
	card := chatSel(`[data-testid=chat-approvals] [data-testid=approval-card][data-tool=write_to_terminal]`)
	step(t, ctx, "ask: the tool call waits for approval",
		sendChat("Print approved-42."),
		chromedp.WaitVisible(card, chromedp.ByQuery),
		waitJS(`document.querySelector('[data-testid=chat-tool][data-tool=write_to_terminal]')?.dataset.status === 'running'`))
	var allowLabel, reason string
	step(t, ctx, "read the card",
		chromedp.Text(card+` [data-testid=approval-allow-goal]`, &allowLabel, chromedp.ByQuery),
		chromedp.Text(card+` [data-testid=approval-reason]`, &reason, chromedp.ByQuery))
	shot(t, ctx, "chat-approval")
	if allowLabel != "Allow for this chat" || !strings.Contains(reason, "read_only") {
		t.Fatalf("approval card: allow label %q, reason %q", allowLabel, reason)
	}
	step(t, ctx, "allow once: the tool runs and the answer follows",
		chromedp.Click(card+` [data-testid=approval-allow-once]`, chromedp.ByQuery),
		waitJS(`!document.querySelector('[data-testid=approval-card]')`),
		waitJS(`document.querySelector('[data-testid=chat-tool][data-tool=write_to_terminal]')?.dataset.status === 'ok'`),
		waitJS(`[...document.querySelectorAll('[data-testid=chat-text]')].some(e => e.textContent.includes('It ran after your approval.'))`))
	if body := string(model.ChatRequests()[1].Body); !strings.Contains(body, "approved-42") {
		t.Fatalf("the tool result the model got lacks the shell's output:\n%s", body)
	}
}

// TestChatImageAttachmentEndToEnd: a picture attached through the file picker shows in the
// message and reaches a vision model as an image part of the request.
func TestChatImageAttachmentEndToEnd(t *testing.T) {
	model := llmtest.New(t, llmtest.Script{Replies: []llmtest.Reply{llmtest.Text("A red square.")}})
	srv := startServe(t, t.TempDir(), e2ePassword)
	token := apiToken(t, srv.URL)
	apiCall(t, "POST", srv.URL+"/api/providers", token, map[string]any{"name": "Vision", "kind": "openai",
		"baseUrl": model.OpenAIURL(), "model": "scripted-model", "visionModel": "scripted-vision"}, nil)

	img := image.NewRGBA(image.Rect(0, 0, 32, 32))
	for i := range img.Pix {
		if i%4 == 0 || i%4 == 3 {
			img.Pix[i] = 0xff // opaque red
		}
	}
	var pngBuf bytes.Buffer
	if err := png.Encode(&pngBuf, img); err != nil {
		t.Fatal(err)
	}
	picture := tempFile(t, "square.png", pngBuf.String())

	ctx := newBrowser(t)
	logIn(t, ctx, srv.URL, e2ePassword)
	step(t, ctx, "open the chat panel with Ctrl+Shift+A",
		ctrlShift("a"),
		chromedp.WaitVisible(chatSel(`[data-testid=chat-input]`)))
	step(t, ctx, "attach the picture",
		chromedp.SetUploadFiles(chatSel(`[data-testid=chat-attach-input]`), []string{picture}, chromedp.ByQuery),
		waitJS(`document.querySelectorAll('[data-testid=chat-attachment]').length === 1`))
	step(t, ctx, "send it with a question; the answer arrives",
		sendChat("What is in this picture?"),
		waitJS(`[...document.querySelectorAll('[data-testid=chat-message][data-source=actor] [data-testid=chat-text]')].some(e => e.textContent.includes('A red square'))`),
		waitJS(`document.querySelectorAll('[data-testid=chat-attachment]').length === 0`),
		waitJS(`[...document.querySelectorAll('[data-testid=chat-message][data-source=user] [data-testid=chat-image]')].some(i => i.complete && i.naturalWidth === 32)`))
	reqs := model.ChatRequests()
	if len(reqs) != 1 {
		t.Fatalf("%d model requests, want 1", len(reqs))
	}
	if body := string(reqs[0].Body); !strings.Contains(body, "data:image/png;base64,"+base64.StdEncoding.EncodeToString(pngBuf.Bytes())) {
		t.Fatal("the model request does not carry the attached picture")
	}
}

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

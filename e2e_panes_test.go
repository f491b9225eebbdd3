package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/clusterspace/clusterspace/backend/browser/browsertest"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

// serveWithScriptedModel starts serve with model as its provider, logs in, and returns the
// server, the access token and the first workspace.
func serveWithScriptedModel(t *testing.T, model *llmtest.Server) (*serveProcess, string, listedWorkspace) {
	t.Helper()
	srv := startServe(t, t.TempDir(), e2ePassword)
	addScriptedProvider(t, srv, model)
	token := apiToken(t, srv.URL)
	first := firstWorkspace(t, srv, token)
	// These tests drive the agent's tools, not its approvals: the chat may write without asking
	// (a new conversation asks first; e2e_walkthrough_keys_test.go covers that).
	apiCall(t, "PUT", srv.URL+"/api/workspaces/"+first.ID+"/chat/settings", token,
		map[string]any{"askAbove": "write_local"}, nil)
	return srv, token, first
}

// paneFromList is a scripted model that reads list_panes' result and calls tool with the id
// of the pane pick chooses (the one marked yours, say), adding args.
func paneFromList(t *testing.T, pick func(item map[string]any) bool, tool string, args map[string]any) llmtest.Reply {
	return llmtest.Reply{Compute: func(req llmtest.Request) llmtest.Reply {
		var page struct{ Items []map[string]any }
		if err := json.Unmarshal([]byte(req.LastToolResult()), &page); err != nil {
			t.Errorf("list_panes gave no JSON page: %v\n%s", err, req.LastToolResult())
			return toolCall("abort_with_report", map[string]string{"reason": "no pane list", "what_was_learned": "list_panes failed"})
		}
		for _, it := range page.Items {
			if pick(it) {
				call := map[string]any{"pane_id": it["pane_id"]}
				for k, v := range args {
					call[k] = v
				}
				return toolCall(tool, call)
			}
		}
		t.Errorf("no pane in list_panes fits: %+v", page.Items)
		return toolCall("abort_with_report", map[string]string{"reason": "no pane", "what_was_learned": "none fits"})
	}}
}

// A goal run from the CLI finds its own pane through list_panes, without being told its id,
// and completes its goal in it.
func TestGoalCLIFindsItsPaneThroughListPanes(t *testing.T) {
	srv := llmtest.New(t, llmtest.Script{})
	srv.Push(toolCall("list_panes", map[string]any{}),
		paneFromList(t, func(it map[string]any) bool { return it["yours"] == true && it["kind"] == "terminal" },
			"write_to_terminal", map[string]any{"text": "echo found-my-pane > found.txt"}),
		toolCall("claim_complete", map[string]string{"rationale": "found.txt written in my pane"}))
	code, out, errs := runGoalCLIOn(t, srv, "--goal", "Write found.txt in your terminal", "--check-shell", "grep -q found-my-pane found.txt")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	reqs := srv.ChatRequests()
	if len(reqs) < 2 {
		t.Fatalf("only %d requests", len(reqs))
	}
	listed := reqs[1].LastToolResult()
	for _, want := range []string{`"pane_id": "term-1"`, `"yours": true`, `"kind": "terminal"`, `"workspace": "goal run"`, `"total": 1`} {
		if !strings.Contains(listed, want) {
			t.Errorf("list_panes result lacks %s:\n%s", want, listed)
		}
	}
	// The model also knew its surroundings from the start: the per-turn pane summary.
	if body := string(reqs[0].Body); !strings.Contains(body, `term-1 terminal`) || !strings.Contains(body, `[yours`) {
		t.Errorf("the first request carries no pane summary:\n%s", body)
	}
	if !strings.Contains(out, "verify    passed") {
		t.Errorf("the goal did not verify:\n%s", out)
	}
}

// In the chat, through serve's API: the model lists the panes, takes the top-left terminal's
// id from the result (nobody told it) and works in that pane. Its requests carry the live
// pane summary in the newest message, and the system prompt stays the same.
func TestChatFindsAPaneThroughListPanes(t *testing.T) {
	model := llmtest.New(t, llmtest.Script{})
	model.Push(toolCall("list_panes", map[string]any{}),
		paneFromList(t, func(it map[string]any) bool { return it["row"] == 0.0 && it["col"] == 0.0 && it["kind"] != "browser" },
			"write_to_terminal", map[string]any{"text": "echo left-$((20+1))"}),
		llmtest.Text("Ran it in your left terminal."))
	srv, token, ws := serveWithScriptedModel(t, model)
	apiCall(t, "POST", srv.URL+"/api/workspaces/"+ws.ID+"/chat/messages", token,
		map[string]any{"text": "run the echo in my left terminal"}, nil)
	waitFor(t, "the chat to finish", func() bool { return len(model.ChatRequests()) == 3 })
	reqs := model.ChatRequests()
	if got := reqs[2].LastToolResult(); !strings.Contains(got, "left-21") {
		t.Errorf("write_to_terminal in the listed pane did not run the command:\n%s", got)
	}
	if !strings.Contains(string(reqs[2].Body), ws.Panes[0].ID) {
		t.Errorf("the model's call did not name the top-left pane %s", ws.Panes[0].ID)
	}
	first, last := string(reqs[0].Body), string(reqs[2].Body)
	if !strings.Contains(first, "Panes of workspace") || !strings.Contains(last, "Panes of workspace") {
		t.Errorf("the requests lack the live pane summary")
	}
	if reqs[0].System != reqs[2].System {
		t.Errorf("the system prompt changed between turns:\n%s\n---\n%s", reqs[0].System, reqs[2].System)
	}
}

// The agent steers the window: through the chat, a scripted model maximizes a pane, focuses
// another, converts one to a browser and opens a new workspace; the UI in the browser shows
// each change as it happens, and the person's own Ctrl+Enter toggles maximize too.
func TestAgentSteersTheWindowEndToEnd(t *testing.T) {
	site := browsertest.NewSite(t).URL
	model := llmtest.New(t, llmtest.Script{})
	srv, token, ws := serveWithScriptedModel(t, model)
	p0, p1, p3 := ws.Panes[0].ID, ws.Panes[1].ID, ws.Panes[3].ID

	ctx := newBrowser(t)
	logIn(t, ctx, srv.URL, e2ePassword)
	chat := func(text string, replies ...llmtest.Reply) {
		t.Helper()
		before := len(model.ChatRequests())
		model.Push(append(replies, llmtest.Text("Done."))...)
		apiCall(t, "POST", srv.URL+"/api/workspaces/"+ws.ID+"/chat/messages", token, map[string]any{"text": text}, nil)
		// A conversion starts Chromium: on a loaded machine that takes a while.
		for deadline := time.Now().Add(90 * time.Second); len(model.ChatRequests()) < before+len(replies)+1; time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the chat turn for %q did not end: %d requests", text, len(model.ChatRequests())-before)
			}
		}
	}
	pane := func(id string) string {
		return `document.querySelector('[data-testid=pane][data-pane-id="` + id + `"]')`
	}

	chat("maximize the top-left pane", toolCall("maximize_pane", map[string]string{"pane_id": p0}))
	step(t, ctx, "the maximized pane fills the grid",
		waitJS(pane(p0)+`?.dataset.maximized === 'true'`),
		waitJS(`document.querySelector('[data-testid=pane-grid]').dataset.maximizedPane === '`+p0+`'`))
	shot(t, ctx, "agent-maximized-pane")
	chat("restore it and focus the second pane",
		toolCall("maximize_pane", map[string]string{"pane_id": p0}),
		toolCall("focus_pane", map[string]string{"pane_id": p1}))
	step(t, ctx, "the grid is back and the second pane has the focus",
		waitJS(pane(p0)+`?.dataset.maximized === 'false'`),
		waitJS(pane(p1)+`?.dataset.focused === 'true'`))
	step(t, ctx, "the person's Ctrl+Enter maximizes the focused pane",
		chromedp.KeyEvent("\r", chromedp.KeyModifiers(input.ModifierCtrl)),
		waitJS(pane(p1)+`?.dataset.maximized === 'true'`))
	step(t, ctx, "and Ctrl+Enter again restores it",
		chromedp.KeyEvent("\r", chromedp.KeyModifiers(input.ModifierCtrl)),
		waitJS(pane(p1)+`?.dataset.maximized === 'false'`))

	chat("turn the last pane into a browser on the test site",
		toolCall("convert_pane_to_browser", map[string]string{"pane_id": p3, "url": site + "/"}))
	step(t, ctx, "the converted pane shows a browser",
		waitJS(pane(p3)+`?.dataset.kind === 'browser'`))

	chat("open a workspace for the agents", toolCall("create_workspace", map[string]any{"name": "Agents", "rows": 1, "cols": 3}))
	step(t, ctx, "the new workspace appears in the tab bar and opens",
		waitJS(`[...document.querySelectorAll('[data-testid=ws-tab]')].some(e => e.textContent.includes('Agents') && e.dataset.active === 'true')`),
		waitJS(`document.querySelectorAll('[data-testid=pane]').length === 3`))
	shot(t, ctx, "agent-created-workspace")
}

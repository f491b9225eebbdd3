package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

// inboxKinds is a JavaScript expression: the kinds of the Inbox panel's items, in order, joined
// by commas.
const inboxKinds = `[...document.querySelectorAll('[data-testid=inbox-item]')].map(e => e.dataset.kind).join(',')`

// inboxNext presses the inbox's key, Ctrl+Shift+L, wherever the keyboard is.
func inboxNext() chromedp.Action {
	return ctrlShift("l")
}

// Issue #31's inbox, in headless Chromium against `serve`: a goal asking above its ceiling, a
// fleet whose first task aborts (so the second is blocked) and a pane started as Python, idle
// at its >>> prompt, wait in two workspaces. The status bar counts them, the Inbox panel lists
// them most urgent first (axe-clean), and Ctrl+Shift+L reaches each in turn: the approval asked
// again in its goal's pane, the blocked task's pane in the fleet's workspace, the Python pane
// back in the first workspace with the keyboard in it.
//
// The idle pane is a program at its prompt (Python's REPL), read by the terminal's prompt
// detection; an agent CLI's pane is read by its recogniser instead (backend/terminal's
// AgentState), which the recogniser tests cover on recordings of the real programs.
func TestInboxListsWhatWaitsAndOneKeyReachesEach(t *testing.T) {
	const goalText = "Deploy the site"
	m := newFleetModel(t, func(pane string, turn int) llmtest.Reply {
		switch {
		case pane == "a-term":
			return toolCall("abort_with_report", map[string]string{"reason": "no compiler", "what_was_learned": "gcc is missing"})
		case pane == "b-term":
			return fleetClaim("tested")
		case turn == 0: // the goal of the first workspace: a page is above write_local, so it asks
			return toolCall("browser_navigate", map[string]string{"pane_id": pane, "url": "https://example.com"})
		}
		return fleetClaim("deployed")
	})
	srv := startServe(t, t.TempDir(), e2ePassword)
	addScriptedProvider(t, srv, m.srv)
	ctx := newBrowser(t)
	// The shells first: a launch set while the page is still attaching its first terminals can
	// leave it showing the shell it attached to.
	st := loggedInWithShells(t, ctx, srv.URL)
	token := apiToken(t, srv.URL)
	ws := st.Active
	var goalPane, pyPane string
	for _, p := range st.Panes {
		switch {
		case p.Row == "0" && p.Col == "0":
			goalPane = p.ID
		case p.Row == "0" && p.Col == "1":
			pyPane = p.ID
		}
	}
	if goalPane == "" || pyPane == "" {
		t.Fatalf("no first row of two panes: %+v", st.Panes)
	}

	apiCall(t, "PUT", srv.URL+"/api/workspaces/"+ws+"/panes/"+pyPane+"/launch", token,
		map[string]any{"template": "python"}, nil)
	step(t, ctx, "the Python pane shows its prompt", shellShows(pyPane, ">>>"))
	var g struct{ ID string }
	apiCall(t, "POST", srv.URL+"/api/goals", token, map[string]any{
		"paneId": goalPane, "goal": goalText, "criterion": map[string]string{"kind": "manual"},
		"policy": map[string]string{"risk": "write_local"}, "settings": map[string]any{"criticIntervalSteps": 0},
	}, &g)
	var f struct{ ID string }
	apiCall(t, "POST", srv.URL+"/api/rpc/CreateFleet", token, map[string]any{
		"yaml": `name: inbox-demo
tasks:
  - {id: a, goal: Build it, pane: a-term, check_shell: "true"}
  - {id: b, goal: Test it, pane: b-term, depends_on: [a], check_shell: "true"}
`,
		"policy": map[string]any{"risk": "write_local"}, "settings": map[string]any{"criticIntervalSteps": 0},
	}, &f)
	if g.ID == "" || f.ID == "" {
		t.Fatalf("goal %q, fleet %q", g.ID, f.ID)
	}

	step(t, ctx, "the goal asks; the person puts it off for now",
		chromedp.WaitVisible(`[data-testid=approval-modal]`),
		waitJS(`document.querySelector('[data-testid=approval-modal] [data-goal-id]')?.dataset.goalId === `+jsString(g.ID)),
		chromedp.Click(`[data-testid=approval-later]`),
		waitJS(`!document.querySelector('[data-testid=approval-modal]')`))
	step(t, ctx, "the status bar counts three waiting",
		waitJS(`document.querySelector('[data-testid=status-inbox]')?.dataset.count === '3'`),
		waitJS(`document.querySelector('[data-testid=status-inbox]').textContent.includes('inbox: 3')`))

	step(t, ctx, "the Inbox panel lists them most urgent first, with the keyboard on the first",
		chromedp.Click(`[data-testid=status-inbox]`),
		chromedp.WaitVisible(`[data-testid=inbox-panel]`),
		waitJS(inboxKinds+` === 'approval,task_blocked,agent_idle'`),
		waitJS(`document.activeElement?.dataset.kind === 'approval'`))
	var titles string
	step(t, ctx, "read the items", chromedp.Evaluate(`[...document.querySelectorAll('[data-testid=inbox-item]')].map(e => e.textContent).join('\n')`, &titles))
	for _, want := range []string{"Approve browser_navigate", goalText, "Task blocked: inbox-demo / b", "Idle at its prompt"} {
		if !strings.Contains(titles, want) {
			t.Errorf("the Inbox panel lacks %q:\n%s", want, titles)
		}
	}
	inBothThemes(t, ctx, func(theme string) {
		axeCheck(t, ctx, "inbox panel, "+theme, `[data-testid=inbox-panel]`)
		axeCheck(t, ctx, "status bar with the inbox count, "+theme, `[data-testid=status-bar]`)
	})
	shot(t, ctx, "inbox-panel")
	step(t, ctx, "Down moves to the next item; Esc closes the panel",
		chromedp.KeyEvent(kb.ArrowDown),
		waitJS(`document.activeElement?.dataset.kind === 'task_blocked'`),
		chromedp.KeyEvent(kb.Escape),
		waitJS(`!document.querySelector('[data-testid=inbox-panel]')`))

	step(t, ctx, "Ctrl+Shift+L: the approval, asked again, over its goal's pane",
		inboxNext(),
		chromedp.WaitVisible(`[data-testid=approval-modal]`),
		waitJS(`document.querySelector('[data-testid=approval-modal] [data-goal-id]')?.dataset.goalId === `+jsString(g.ID)),
		waitJS(fmt.Sprintf(`document.querySelector('[data-testid=ws-tab][data-active=true]')?.dataset.wsId === %q`, ws)))
	step(t, ctx, "Ctrl+Shift+L from the approval: it is put off, and the blocked task's pane in the fleet's workspace has the keyboard",
		inboxNext(),
		waitJS(`!document.querySelector('[data-testid=approval-modal]')`),
		waitJS(`document.querySelector('[data-testid=ws-tab][data-active=true]')?.dataset.wsId?.startsWith('ws-'+`+jsString(f.ID)+`)`),
		waitJS(focusInPane+` === 'b-term'`))
	step(t, ctx, "Ctrl+Shift+L: the Python pane, back in the first workspace, with the keyboard in it",
		inboxNext(),
		waitJS(fmt.Sprintf(`document.querySelector('[data-testid=ws-tab][data-active=true]')?.dataset.wsId === %q`, ws)),
		waitJS(fmt.Sprintf(`%s === %q`, focusInPane, pyPane)))
	// Looked at, the idle pane leaves the inbox; the approval and the blocked task stay.
	step(t, ctx, "the pane in front of the person is not waiting for them",
		waitJS(`document.querySelector('[data-testid=status-inbox]')?.dataset.count === '2'`))
	step(t, ctx, "typing reaches Python",
		waitJS(fmt.Sprintf(`%s === %q`, focusInPane, pyPane)),
		typeLine("print(6*7)"),
		shellShows(pyPane, "42"))
	shot(t, ctx, "inbox-reached-python")

	var list struct {
		Items []struct{ Kind, PaneID, WorkspaceID string }
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		apiCall(t, "GET", srv.URL+"/api/inbox", token, nil, &list)
		if len(list.Items) == 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if len(list.Items) != 2 || list.Items[0].Kind != "approval" || list.Items[0].PaneID != goalPane || list.Items[0].WorkspaceID != ws ||
		list.Items[1].Kind != "task_blocked" || list.Items[1].PaneID != "b-term" {
		t.Fatalf("GET /api/inbox: %+v", list.Items)
	}
}

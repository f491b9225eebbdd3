package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

// The critic is told apart from the agent by its system prompt (backend/goal/prompts.go).
const criticSystemMatch = "You are a critic evaluating"

// fieldError is the JS for the message shown next to a New Goal field (empty when none).
func fieldError(field string) string {
	return fmt.Sprintf(`(document.querySelector('[data-testid=new-goal-dialog] [data-testid=field-error][data-field=%q]')?.textContent ?? '')`, field)
}

func stepCount() string {
	return `document.querySelectorAll('[data-testid=goal-detail] [data-testid=step]').length`
}

// railHas is the JS that is true when the rail shows an entry of the type whose text contains text.
func railHas(typ, text string) string {
	return fmt.Sprintf(`[...document.querySelectorAll('[data-testid=rail-entry][data-type=%q]')].some(e => e.textContent.includes(%q))`, typ, text)
}

// retryEnabled: the Retry button is there and takes clicks. It shows as soon as the goal's
// end arrives as an event, and stays disabled until the abort request itself has returned;
// a click before that does nothing, as it would for a person.
const retryEnabled = `(() => { const b = document.querySelector('[data-testid=goal-retry]'); return !!b && !b.disabled })()`

func detailStatus(status string) string {
	return fmt.Sprintf(`document.querySelector('[data-testid=goal-detail]')?.dataset.status === %q`, status)
}

// actorRequest is the body of the agent's request that the scripted reply n answered (the
// critic's requests are answered by its role and are not counted).
func actorRequest(t *testing.T, model *llmtest.Server, n int) string {
	t.Helper()
	want := fmt.Sprintf("replies[%d]", n)
	var body string
	waitFor(t, "the model server to receive "+want, func() bool {
		for _, r := range model.ChatRequests() {
			if r.Answer == want {
				body = string(r.Body)
				return true
			}
		}
		return false
	})
	return body
}

// TestGoalDashboardRunsAGoal drives a goal from the dashboard against the scripted model
// server: started through the New Goal dialog with a shell criterion in a sandbox, its steps
// and checklist stream in, a premature claim fails verification, an above-ceiling tool call asks and is
// denied (the model is told), the critic reports, the user pauses, steers and resumes, the goal
// completes; a retry is aborted, another is cut by a restart of the server, after which the same
// history is there, the cut goal offers to resume with its context, and finished goals prune.
func TestGoalDashboardRunsAGoal(t *testing.T) {
	const (
		denyReason = "no web today"
		steerText  = "please create it with touch"
		goalText   = "Create done.txt in the sandbox"
	)
	model := llmtest.New(t, llmtest.Script{Roles: []llmtest.Role{{
		Name: "critic", Match: llmtest.Match{System: criticSystemMatch},
		Reply: llmtest.Text("PROGRESSING\nThe agent is about to create the file."),
	}}})
	dataDir, sandbox := t.TempDir(), t.TempDir()
	srv := startServe(t, dataDir, e2ePassword)
	addScriptedProvider(t, srv, model)
	ctx := newBrowser(t)
	logIn(t, ctx, srv.URL, e2ePassword)
	pane := readState(t, ctx).Panes[0].ID

	// The agent's side of the story, in order; each reply answers one model turn.
	model.Push(
		llmtest.Calls( // a checklist, then work: two steps from one reply
			llmtest.Call("write_todos", map[string]any{"items": []string{"Create done.txt", "Claim completion"}}),
			llmtest.Call("write_to_terminal", map[string]string{"pane_id": pane, "text": "echo working"})),
		toolCall("claim_complete", map[string]string{"rationale": "done.txt exists"}),                  // too early: verification fails
		toolCall("browser_navigate", map[string]string{"pane_id": pane, "url": "https://example.com"}), // network_get > write_local: asks
		toolCall("write_to_terminal", map[string]string{"pane_id": pane, "text": "touch done.txt"}),    // the 2nd work step: the critic runs
		llmtest.Stalled("Let me think about", 2),                                                       // the user pauses this turn
		llmtest.Calls(
			llmtest.Call("complete_todo", map[string]any{"index": 0, "note": "created with touch"}),
			llmtest.Call("claim_complete", map[string]string{"rationale": "done.txt now exists"})),
	)

	openDashboard(t, ctx)
	step(t, ctx, "the dashboard says how to start a goal",
		waitJS(`(document.querySelector('[data-testid=goal-empty]')?.textContent ?? '').includes('New Goal')`))
	step(t, ctx, "fill the New Goal dialog",
		chromedp.Click(`[data-testid=goal-new]`),
		chromedp.WaitVisible(`[data-testid=new-goal-dialog]`),
		chromedp.SendKeys(`[data-testid=goal-text-input]`, goalText),
		pickOption(`[data-testid=goal-pane-select]`, pane),
		chromedp.SendKeys(`[data-testid=goal-check-command]`, "test -f done.txt"),
		chromedp.SendKeys(`[data-testid=goal-sandbox]`, sandbox),
		chromedp.SendKeys(`[data-testid=goal-critic-interval]`, "2"),
		chromedp.Click(`[data-testid=goal-start]`),
		waitJS(`!document.querySelector('[data-testid=new-goal-dialog]')`),
		waitJS(`document.querySelectorAll('[data-testid=goal-row]').length === 1`))

	// Steps stream in while the page stays put; the premature claim fails verification.
	step(t, ctx, "watch the steps stream in and the verification fail",
		waitJS(`(document.querySelector('[data-testid=goal-text]')?.textContent ?? '') === `+jsString(goalText)),
		waitJS(`(document.querySelector('[data-testid=goal-criterion]')?.textContent ?? '').includes('test -f done.txt')`),
		waitJS(stepCount()+` >= 1`),
		waitJS(`(document.querySelector('[data-testid=goal-todos]')?.textContent ?? '').includes('0 of 2 done')`),
		waitJS(railHas("verification_failed", "Shell exited 1")))
	// The log names the pane by its title, not its id; docked, the dashboard leaves the pane
	// the goal types in on screen, and the rail reads oldest first like the log.
	label := readState(t, ctx).Panes[0].Label
	step(t, ctx, "the step log names the pane by its title",
		waitJS(fmt.Sprintf(`[...document.querySelectorAll('[data-testid=step][data-tool=write_to_terminal] [data-testid=step-pane]')].some(e => e.textContent === %q)`, label)),
		waitJS(fmt.Sprintf(`![...document.querySelectorAll('[data-testid=step-preview]')].some(e => e.textContent.includes(%q))`, pane)),
		waitJS(`(() => { const seqs = [...document.querySelectorAll('[data-testid=rail-entry]')].map(e => Number(e.dataset.seq)); return seqs.length > 0 && seqs.every((s, i) => i === 0 || seqs[i-1] < s); })()`))

	// The navigation is above the ceiling: the modal asks, the goal waits, its pane says so.
	step(t, ctx, "the approval modal asks about browser_navigate",
		chromedp.WaitVisible(`[data-testid=approval-modal]`),
		waitJS(`document.querySelector('[data-testid=approval-tool]').textContent === 'browser_navigate'`),
		waitJS(`document.querySelector('[data-testid=approval-args]').textContent.includes('https://example.com')`),
		waitJS(`document.querySelector('[data-testid=approval-count]').textContent === '1 of 1'`),
		waitJS(`document.querySelector('[data-testid=approval-modal]').textContent.includes(`+jsString(goalText)+`)`),
		waitJS(detailStatus("awaiting_approval")),
		waitJS(stepCount()+` === 3`))
	shot(t, ctx, "goal-approval")
	step(t, ctx, "close the dashboard with Esc to see the pane's badge",
		chromedp.Click(`[data-testid=approval-later]`),
		waitJS(`!document.querySelector('[data-testid=approval-modal]')`),
		chromedp.KeyEvent(kb.Escape),
		waitJS(`!document.querySelector('[data-testid=goal-dashboard]')`),
		waitJS(fmt.Sprintf(`(document.querySelector('%s [data-testid=pane-goal-badge]')?.textContent ?? '').includes('waiting for your approval')`, paneSel(pane))),
		waitJS(`document.querySelector('[data-testid=status-goals]').dataset.running === '1'`))
	step(t, ctx, "the badge opens the goal, and the request comes back",
		chromedp.Click(paneSel(pane)+` [data-testid=pane-goal-badge]`),
		chromedp.WaitVisible(`[data-testid=goal-dashboard]`),
		chromedp.WaitVisible(`[data-testid=approval-modal]`))
	step(t, ctx, "deny with a reason",
		chromedp.SendKeys(`[data-testid=approval-deny-reason]`, denyReason),
		chromedp.Click(`[data-testid=approval-deny]`),
		waitJS(`!document.querySelector('[data-testid=approval-modal]')`))
	if body := actorRequest(t, model, 3); !strings.Contains(body, "The user denied this call. Their reason: "+denyReason) {
		t.Fatalf("the model's next request does not carry the denial:\n%s", body)
	}
	step(t, ctx, "dock the dashboard beside the panes: the goal's terminal stays visible",
		chromedp.Click(`[data-testid=goal-dashboard-dock]`),
		waitJS(`document.querySelector('[data-testid=goal-dashboard]').dataset.docked === 'true'`),
		waitJS(fmt.Sprintf(`(() => { const r = document.querySelector(%q).getBoundingClientRect(); const hit = document.elementFromPoint(r.x + r.width/2, r.y + r.height/2); return r.width > 100 && !!hit && !!hit.closest(%q); })()`, paneSel(pane), paneSel(pane))))
	shot(t, ctx, "goal-dashboard-docked")
	step(t, ctx, "back to full size", chromedp.Click(`[data-testid=goal-dashboard-dock]`),
		waitJS(`document.querySelector('[data-testid=goal-dashboard]').dataset.docked === 'false'`))

	// The goal goes on: the critic reports after the second work step, then the turn stalls.
	step(t, ctx, "the goal continues; the critic's verdict and the denial are in the rail",
		waitJS(railHas("approval_resolved", denyReason)),
		waitJS(railHas("critic", "PROGRESSING")),
		waitJS(stepCount()+` >= 5`))
	actorRequest(t, model, 4) // the stalled turn is streaming
	step(t, ctx, "pause the goal mid-turn",
		chromedp.Click(`[data-testid=goal-pause]`),
		waitJS(detailStatus("paused")),
		waitJS(railHas("paused", "")))
	step(t, ctx, "steer the paused goal",
		chromedp.SendKeys(`[data-testid=goal-steer-input]`, steerText),
		chromedp.Click(`[data-testid=goal-steer-send]`),
		waitJS(railHas("steered", steerText)),
		waitJS(`document.querySelector('[data-testid=goal-steer-input]').value === ''`))
	step(t, ctx, "resume; the goal completes",
		chromedp.Click(`[data-testid=goal-resume]`),
		waitJS(railHas("resumed", "")),
		waitJS(detailStatus("completed")),
		waitJS(railHas("verification_passed", "Shell exited 0")),
		waitJS(`(document.querySelector('[data-testid=goal-report]')?.textContent ?? '').includes('done.txt now exists')`),
		waitJS(`(document.querySelector('[data-testid=goal-todos]')?.textContent ?? '').includes('1 of 2 done')`))
	if body := actorRequest(t, model, 5); !strings.Contains(body, steerText) {
		t.Fatalf("the model's request after the resume does not carry the steer text:\n%s", body)
	}
	wantFiles(t, sandbox, "done.txt") // the goal completed: its shell wrote it
	shot(t, ctx, "goal-completed")

	// Retry starts a copy of the spec; it is aborted while its first turn streams.
	model.Push(llmtest.Stalled("Starting over", 2))
	step(t, ctx, "retry the goal",
		waitJS(retryEnabled), chromedp.Click(`[data-testid=goal-retry]`),
		waitJS(`document.querySelectorAll('[data-testid=goal-row]').length === 2`),
		waitJS(detailStatus("running")))
	actorRequest(t, model, 6)
	step(t, ctx, "abort the retry after confirming",
		chromedp.Click(`[data-testid=goal-abort]`),
		chromedp.WaitVisible(`[data-testid=confirm-dialog]`),
		chromedp.Click(`[data-testid=confirm-ok]`),
		waitJS(detailStatus("aborted")),
		waitJS(`document.querySelector('[data-testid=status-goals]').dataset.running === '0'`))

	// One more retry is still running when the server stops: it comes back interrupted.
	model.Push(llmtest.Stalled("Once more", 2))
	step(t, ctx, "retry the aborted goal", waitJS(retryEnabled), chromedp.Click(`[data-testid=goal-retry]`), waitJS(detailStatus("running")))
	actorRequest(t, model, 7)

	// A restart of the server (same data dir) shows the same history, rebuilt from the store.
	srv.Stop(t)
	srv = startServe(t, dataDir, e2ePassword)
	logIn(t, ctx, srv.URL, e2ePassword)
	openDashboard(t, ctx)
	rowStatuses := `[...document.querySelectorAll('[data-testid=goal-row]')].map(r => r.dataset.status).join()`
	filter := func(f string) chromedp.Action {
		return chromedp.Click(fmt.Sprintf(`[data-testid=goal-filter][data-filter=%q]`, f))
	}
	step(t, ctx, "the goals are there after the restart, and filter",
		waitJS(rowStatuses+` === 'interrupted,aborted,completed'`),
		filter("active"), waitJS(rowStatuses+` === 'interrupted'`),
		filter("finished"), waitJS(rowStatuses+` === 'aborted,completed'`),
		filter("all"), waitJS(rowStatuses+` === 'interrupted,aborted,completed'`))
	step(t, ctx, "the interrupted goal offers to resume with its context, and is deleted after confirming",
		chromedp.Click(`[data-testid=goal-row][data-status=interrupted]`),
		waitJS(detailStatus("interrupted")),
		waitJS(`document.querySelector('[data-testid=goal-resume]').textContent.trim() === 'Resume (reload prior context and continue)'`),
		chromedp.Click(`[data-testid=goal-delete]`),
		chromedp.WaitVisible(`[data-testid=confirm-dialog]`),
		chromedp.Click(`[data-testid=confirm-ok]`),
		waitJS(rowStatuses+` === 'aborted,completed'`))
	step(t, ctx, "the completed goal's history is the same",
		chromedp.Click(`[data-testid=goal-row][data-status=completed]`),
		waitJS(detailStatus("completed")),
		waitJS(stepCount()+` === 7`),
		waitJS(railHas("critic", "PROGRESSING")),
		waitJS(railHas("verification_failed", "Shell exited 1")),
		waitJS(railHas("verification_passed", "")),
		waitJS(railHas("approval_resolved", denyReason)),
		waitJS(railHas("steered", steerText)),
		waitJS(`(document.querySelector('[data-testid=goal-report]')?.textContent ?? '').includes('done.txt now exists')`))
	step(t, ctx, "a step expands to its arguments and result",
		chromedp.Click(`[data-testid=step][data-index="5"] button`),
		waitJS(`(document.querySelector('[data-testid=step][data-index="5"] [data-testid=step-args]')?.textContent ?? '').includes('touch done.txt')`))
	shot(t, ctx, "goal-history-after-restart")
	step(t, ctx, "prune the finished goals after confirming",
		chromedp.Click(`[data-testid=goal-prune]`),
		chromedp.WaitVisible(`[data-testid=confirm-dialog]`),
		chromedp.Click(`[data-testid=confirm-ok]`),
		waitJS(`document.querySelectorAll('[data-testid=goal-row]').length === 0`),
		chromedp.WaitVisible(`[data-testid=goal-empty]`))
}

// TestGoalDashboardNewGoalRequiredFields submits the New Goal dialog with each required field
// empty, kind by kind, and sees each message next to its field; then the backend's refusals
// land next to the fields they name.
func TestGoalDashboardNewGoalRequiredFields(t *testing.T) {
	_, ctx := openApp(t)
	pane := readState(t, ctx).Panes[0].ID
	openDashboard(t, ctx)

	step(t, ctx, "submit the empty dialog",
		chromedp.Click(`[data-testid=goal-new]`),
		chromedp.WaitVisible(`[data-testid=new-goal-dialog]`),
		chromedp.Click(`[data-testid=goal-start]`),
		waitJS(fieldError("goal")+`.includes('Say what the goal should achieve')`),
		waitJS(fieldError("paneId")+`.includes('Pick the pane')`),
		waitJS(fieldError("criterion.command")+`.includes('shell command')`))
	kinds := []struct{ kind, field, text string }{
		{"model_question", "criterion.question", "yes/no question the judge answers"},
		{"json_predicate", "criterion.expr", "expression that must be true"},
		{"visual", "criterion.question", "question about the screen"},
		{"visual", "criterion.paneId", "browser pane"},
	}
	for _, k := range kinds {
		step(t, ctx, "submit with an empty "+k.field+" for "+k.kind,
			chromedp.Click(fmt.Sprintf(`[data-testid=criterion-tab][data-kind=%q]`, k.kind)),
			chromedp.Click(`[data-testid=goal-start]`),
			waitJS(fieldError(k.field)+`.includes(`+jsString(k.text)+`)`),
			waitJS(fieldError("goal")+` !== ''`))
	}
	step(t, ctx, "a manual check needs nothing more, and warns",
		chromedp.Click(`[data-testid=criterion-tab][data-kind=manual]`),
		waitJS(`(document.querySelector('[data-testid=criterion-manual-warning]')?.textContent ?? '').includes('re-open the goal')`))

	// The fields are filled; the backend refuses a sandbox that does not exist, by field.
	missing := filepath.Join(t.TempDir(), "no-such-dir")
	step(t, ctx, "the backend refuses a missing sandbox next to the sandbox field",
		chromedp.SendKeys(`[data-testid=goal-text-input]`, "Anything"),
		pickOption(`[data-testid=goal-pane-select]`, pane),
		chromedp.SendKeys(`[data-testid=goal-sandbox]`, missing),
		chromedp.Click(`[data-testid=goal-start]`),
		waitJS(fieldError("policy.sandboxDir")+`.includes('does not exist')`),
		waitJS(fieldError("goal")+` === '' && `+fieldError("paneId")+` === ''`))
	step(t, ctx, "and a missing model provider next to the provider field",
		chromedp.SendKeys(`[data-testid=goal-sandbox]`, strings.Repeat(kb.Backspace, len(missing)+5)),
		chromedp.Click(`[data-testid=goal-start]`),
		waitJS(fieldError("settings.provider")+` !== ''`),
		waitJS(fieldError("policy.sandboxDir")+` === ''`))
	shot(t, ctx, "new-goal-refused")
	var rows int
	step(t, ctx, "nothing was started", chromedp.Evaluate(`document.querySelectorAll('[data-testid=goal-row]').length`, &rows))
	if rows != 0 {
		t.Fatalf("%d goals listed after refused starts", rows)
	}
}

// TestGoalDashboardStepScreenshots: a goal's browser_screenshot step shows its picture as a
// thumbnail in the step log, fetched through the served API with the user's token, and the
// thumbnail opens it full size.
func TestGoalDashboardStepScreenshots(t *testing.T) {
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<title>Report</title><body style="background:#c0392b"><h1>Quarterly report</h1>`)
	}))
	defer page.Close()
	model := llmtest.New(t, llmtest.Script{})
	srv := startServe(t, t.TempDir(), e2ePassword)
	addScriptedProvider(t, srv, model)
	token, web := makeBrowserPane(t, srv)
	apiCall(t, "POST", srv.URL+"/api/panes/"+web+"/browser", token, map[string]any{"url": page.URL, "width": 800, "height": 600}, nil)

	model.Push(
		toolCall("browser_screenshot", map[string]string{"pane_id": web}),
		toolCall("claim_complete", map[string]string{"rationale": "the report is captured"}),
	)
	zero := 0
	apiCall(t, "POST", srv.URL+"/api/goals", token, map[string]any{
		"paneId": web, "goal": "Capture the report page", "criterion": map[string]string{"kind": "manual"},
		"policy": map[string]string{"risk": "read_only"}, "settings": map[string]any{"criticIntervalSteps": zero},
	}, nil)

	ctx := newBrowser(t)
	logIn(t, ctx, srv.URL, e2ePassword)
	openDashboard(t, ctx)
	step(t, ctx, "open the finished goal",
		chromedp.Click(`[data-testid=goal-row]`),
		waitJS(detailStatus("completed")))
	step(t, ctx, "the screenshot step shows a thumbnail of the page",
		waitJS(`(() => {
			const img = document.querySelector('[data-testid=step][data-tool=browser_screenshot] [data-testid=step-thumb] img');
			return !!img && img.src.startsWith('data:image/') && img.complete && img.naturalWidth > 100;
		})()`))
	step(t, ctx, "the thumbnail opens full size",
		chromedp.Click(`[data-testid=step][data-tool=browser_screenshot] [data-testid=step-thumb]`),
		waitJS(`(() => {
			const img = document.querySelector('[data-testid=step-image-full] img');
			return !!img && img.complete && img.naturalWidth >= 640;
		})()`))
	shot(t, ctx, "goal-step-screenshot")
}

const judgeSystemMatch = "You are a strict yes/no judge"

// TestCatalogInTheNewGoalDialog drives the configuration layer through `serve` in Chromium, as
// a person would: the New Goal dialog's "From template" refuses an empty parameter by name,
// then fills the goal, the criterion and the template's persona; the person picks a persona of
// their own config dir instead, and the goal it starts sends that persona's prompt and
// temperature to the model. Settings → Personas lists the file with its path, and a broken
// file with its line and field; a file added while the app runs shows up without a restart.
func TestCatalogInTheNewGoalDialog(t *testing.T) {
	configDir := t.TempDir()
	writeFiles(t, configDir, map[string]string{
		"personas/house.md":  "---\nname: House style\ndescription: Our way of working\ntemperature: 0.25\n---\nHOUSE-STYLE-MARKER: small commits.\n",
		"personas/broken.md": "---\nname: Broken\nmax_tokens: lots\n---\nx\n",
	})
	house, broken := filepath.Join(configDir, "personas", "house.md"), filepath.Join(configDir, "personas", "broken.md")
	t.Setenv("CLUSTERSPACE_CONFIG_DIR", configDir)

	model := llmtest.New(t, llmtest.Script{Roles: []llmtest.Role{
		{Name: "judge", Match: llmtest.Match{System: judgeSystemMatch}, Reply: llmtest.Text("YES")},
		{Name: "critic", Match: llmtest.Match{System: criticSystemMatch}, Reply: llmtest.Text("PROGRESSING\nfine")},
	}})
	model.Push(toolCall("claim_complete", map[string]string{"rationale": "fixed, the test passes"}))
	_, ctx := openAppWithModel(t, model)
	pane := readState(t, ctx).Panes[0].ID

	openDashboard(t, ctx)
	step(t, ctx, "open the New Goal dialog and pick a task template",
		chromedp.Click(`[data-testid=goal-new]`),
		chromedp.WaitVisible(`[data-testid=new-goal-dialog]`),
		waitJS(`[...document.querySelectorAll('[data-testid=goal-template-select] option')].some(o => o.value === 'fix-bug')`),
		pickOption(`[data-testid=goal-template-select]`, "fix-bug"),
		waitJS(`document.querySelectorAll('[data-testid=goal-template-param]').length === 2`))
	step(t, ctx, "an empty parameter is refused by name",
		chromedp.SendKeys(`[data-testid=goal-template-param][data-param=bug]`, "crash on empty input"),
		chromedp.Click(`[data-testid=goal-template-apply]`),
		waitJS(`(document.querySelector('[data-testid=goal-template-param-error]')?.textContent ?? '').includes('{{repo}}')`),
		waitJS(`document.querySelector('[data-testid=goal-text-input]').value === ''`))
	step(t, ctx, "filled in, the template fills the goal, the criterion and the persona",
		chromedp.SendKeys(`[data-testid=goal-template-param][data-param=repo]`, "/srv/project"),
		chromedp.Click(`[data-testid=goal-template-apply]`),
		waitJS(`document.querySelector('[data-testid=goal-text-input]').value.includes('fix this bug: crash on empty input')`),
		waitJS(`document.querySelector('[data-testid=goal-text-input]').value.includes('1. Reproduce')`),
		waitJS(`(document.querySelector('[data-testid=goal-check-question]')?.value ?? '').includes('In /srv/project the new test')`),
		waitJS(`document.querySelector('[data-testid=goal-persona-select]').value === 'debugger'`),
		waitJS(`!document.querySelector('[data-testid=goal-template-param-error]')`))
	shot(t, ctx, "catalog-new-goal-from-template")
	step(t, ctx, "pick the person's own persona and start the goal",
		pickOption(`[data-testid=goal-persona-select]`, "house"),
		waitJS(`(document.querySelector('[data-testid=goal-persona-description]')?.textContent ?? '').includes('Our way of working')`),
		pickOption(`[data-testid=goal-pane-select]`, pane),
		chromedp.Click(`[data-testid=goal-start]`),
		waitJS(`!document.querySelector('[data-testid=new-goal-dialog]')`),
		waitJS(detailStatus("completed")),
		waitJS(`(document.querySelector('[data-testid=goal-persona]')?.textContent ?? '') === 'house'`))

	var actor *llmtest.Request
	for _, r := range model.ChatRequests() {
		if r.Answer == "replies[0]" {
			r := r
			actor = &r
		}
	}
	if actor == nil {
		t.Fatal("the agent's request never reached the model")
	}
	if !strings.Contains(actor.System, "HOUSE-STYLE-MARKER") || strings.Contains(actor.System, "Persona: Debugger") {
		t.Errorf("the system prompt should carry the picked persona only:\n%s", actor.System)
	}
	if actor.JSON["temperature"] != 0.25 {
		t.Errorf("temperature %v, want the persona's 0.25", actor.JSON["temperature"])
	}
	if !strings.Contains(actor.LastUser, "crash on empty input") {
		t.Errorf("the rendered goal did not reach the model: %q", actor.LastUser)
	}

	step(t, ctx, "Settings → Personas lists the file and the broken one's line and field",
		chromedp.KeyEvent(kb.Escape),
		waitJS(`!document.querySelector('[data-testid=goal-dashboard]')`),
		chromedp.Click(`[data-testid=settings-open]`),
		chromedp.WaitVisible(`[data-testid=settings]`),
		chromedp.Click(`[data-testid=settings-tab-personas]`),
		waitJS(fmt.Sprintf(`[...document.querySelectorAll('[data-testid=catalog-item][data-id=house] [data-testid=catalog-source]')].some(e => e.textContent === %q)`, house)),
		waitJS(fmt.Sprintf(`[...document.querySelectorAll('[data-testid=catalog-problem]')].some(e => e.textContent.includes(%q) && e.textContent.includes('max_tokens') && e.textContent.includes('a whole number'))`, broken+":3")),
		waitJS(`!!document.querySelector('[data-testid=catalog-item][data-id=engineer] [data-testid=catalog-customize]')`))
	shot(t, ctx, "catalog-settings-personas")

	writeFiles(t, configDir, map[string]string{"personas/late.md": "---\nname: Late arrival\n---\nAdded while running.\n"})
	step(t, ctx, "a file added while the app runs shows up without a restart",
		waitJS(`!!document.querySelector('[data-testid=catalog-item][data-id=late]')`))
	step(t, ctx, "under serve, Open folder shows where the folder is on the server",
		chromedp.Click(`[data-testid=catalog-open-folder-personas]`),
		waitJS(fmt.Sprintf(`(document.querySelector('[data-testid=catalog-note]')?.textContent ?? '').includes(%q)`, filepath.Join(configDir, "personas"))))
}

package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

// fleetNodeStatus is the JS that is true when the dependency graph shows the task in that state.
func fleetNodeStatus(task, status string) string {
	return fmt.Sprintf(`document.querySelector('[data-testid=fleet-graph] [data-testid=graph-node][data-task=%q]')?.dataset.status === %q`, task, status)
}

// fleetTypeOver selects what an input holds and types text over it, as a person does.
func fleetTypeOver(sel, text string) chromedp.Action {
	return chromedp.Tasks{
		chromedp.Evaluate(fmt.Sprintf(`document.querySelector(%q).select()`, sel), nil),
		chromedp.SendKeys(sel, text),
		waitJS(fmt.Sprintf(`document.querySelector(%q).value === %q`, sel, text)),
	}
}

func composerTask(i int, sel string) string {
	return fmt.Sprintf(`[data-testid=composer-task][data-index="%d"] %s`, i, sel)
}

// TestFleetComposerAndDashboardEndToEnd: a person opens the Fleet Dashboard from the palette,
// composes a two-task fleet in the Composer (the second depends on the first), sees the
// server's refusal next to the field it names, runs the fleet, watches the graph progress
// (the first completes, only then does the second run) and the cards follow the goals, then
// selects every task and aborts: the running one is aborted, the finished one says why it was
// left alone, and the fleet ends.
func TestFleetComposerAndDashboardEndToEnd(t *testing.T) {
	secondStarted := make(chan struct{}, 1)
	model := everyTurn(t, func(req llmtest.Request) llmtest.Reply {
		pane := req.Pane()
		turn := req.AssistantTurns()
		switch {
		case pane == "":
			return llmtest.Text("no pane")
		case pane == "first-term" && turn == 0:
			// Slow enough for the page to show the first task running and the second waiting.
			return llmtest.Calls(
				llmtest.Call("write_todos", map[string]any{"items": []string{"Make the thing", "Claim it"}}),
				llmtest.Call("wait", map[string]int{"ms": 1500}))
		case pane == "first-term":
			return toolCall("claim_complete", map[string]string{"rationale": "the thing is made"})
		default:
			select {
			case secondStarted <- struct{}{}:
			default:
			}
			return toolCall("wait", map[string]int{"ms": 300}) // works until aborted
		}
	})
	sandbox := t.TempDir()
	_, ctx := openAppWithModel(t, model)

	openFleetDashboard(t, ctx,
		chromedp.WaitVisible(`[data-testid=fleet-dashboard]`),
		waitJS(`(document.querySelector('[data-testid=fleet-empty]')?.textContent ?? '').includes('New Fleet')`))

	step(t, ctx, "compose two tasks, the second after the first",
		chromedp.Click(`[data-testid=fleet-new]`),
		chromedp.WaitVisible(`[data-testid=fleet-composer]`),
		chromedp.SendKeys(`[data-testid=composer-name]`, "pair"),
		chromedp.SendKeys(`[data-testid=composer-sandbox]`, "/no/such/dir"),
		fleetTypeOver(composerTask(0, `[data-testid=composer-task-id]`), "first"),
		chromedp.SendKeys(composerTask(0, `[data-testid=composer-task-goal]`), "Make the thing"),
		chromedp.SendKeys(composerTask(0, `[data-testid=composer-task-role]`), "Builder"),
		pickOption(composerTask(0, `[data-testid=composer-task-check]`), "shell"),
		chromedp.SendKeys(composerTask(0, `[data-testid=composer-task-check-text]`), "true"),
		chromedp.Click(`[data-testid=composer-add-task]`),
		chromedp.WaitVisible(composerTask(1, `[data-testid=composer-task-id]`)),
		fleetTypeOver(composerTask(1, `[data-testid=composer-task-id]`), "second"),
		chromedp.SendKeys(composerTask(1, `[data-testid=composer-task-goal]`), "Use the thing"),
		chromedp.SendKeys(composerTask(1, `[data-testid=composer-task-role]`), "Tester"),
		chromedp.Click(composerTask(1, `[data-testid=composer-task-dep][data-dep=first]`)),
		pickOption(composerTask(1, `[data-testid=composer-task-check]`), "shell"),
		chromedp.SendKeys(composerTask(1, `[data-testid=composer-task-check-text]`), "true"),
		// The preview graph draws the dependency, and the YAML is the file `fleet run` reads.
		waitJS(`!!document.querySelector('[data-testid=composer-graph] [data-testid=graph-edge][data-from=first][data-to=second]')`),
		waitJS(`document.querySelector('[data-testid=composer-yaml]').textContent.includes('  - id: second\n    goal: Use the thing\n    role: Tester\n    depends_on: [first]\n    check_shell: "true"')`))

	step(t, ctx, "the server's refusal shows next to the sandbox field, and nothing runs",
		chromedp.Click(`[data-testid=composer-run]`),
		waitJS(`(document.querySelector('[data-testid=composer-error][data-field=sandboxDir]')?.textContent ?? '').includes('/no/such/dir')`),
		chromedp.WaitVisible(`[data-testid=fleet-composer]`),
		waitJS(`document.querySelectorAll('[data-testid=ws-tab]').length === 1`)) // no workspace made for its panes
	shot(t, ctx, "fleet-composer")

	step(t, ctx, "fix the sandbox and run",
		fleetTypeOver(`[data-testid=composer-sandbox]`, sandbox),
		chromedp.Click(`[data-testid=composer-run]`),
		waitJS(`!document.querySelector('[data-testid=fleet-composer]')`),
		chromedp.WaitVisible(`[data-testid=fleet-detail]`),
		waitJS(`document.querySelector('[data-testid=fleet-name]').textContent === 'pair'`))

	step(t, ctx, "the graph shows the first running while the second waits, with its card following the goal",
		waitJS(fleetNodeStatus("first", "running")),
		waitJS(fleetNodeStatus("second", "waiting")),
		waitJS(`document.querySelector('[data-testid=graph-edge][data-from=first][data-to=second]').dataset.state === 'pending'`),
		waitJS(`(document.querySelector('[data-testid=task-card][data-task=first] [data-testid=task-progress]')?.textContent ?? '').includes('0 of 2')`),
		waitJS(`document.querySelector('[data-testid=task-card][data-task=first] [data-testid=task-role]').textContent === 'Builder'`))
	shot(t, ctx, "fleet-first-running")

	step(t, ctx, "the first completes, and only then does the second run",
		waitJS(fleetNodeStatus("first", "completed")),
		waitJS(`document.querySelector('[data-testid=graph-edge][data-from=first][data-to=second]').dataset.state === 'done'`),
		waitJS(fleetNodeStatus("second", "running")),
		waitJS(`Number(document.querySelector('[data-testid=task-card][data-task=first] [data-testid=task-steps]').textContent) >= 2`),
		waitJS(`(document.querySelector('[data-testid=fleet-summary]')?.textContent ?? '').includes('1 of 2 done')`))
	select {
	case <-secondStarted:
	case <-time.After(15 * time.Second):
		t.Fatal("the page shows the second task running, but its agent never asked the model")
	}
	shot(t, ctx, "fleet-second-running")

	step(t, ctx, "select every task and abort",
		chromedp.Click(`[data-testid=task-select-all]`),
		waitJS(`document.querySelectorAll('[data-testid=task-select]:checked').length === 2`),
		waitJS(`document.querySelector('[data-testid=bulk-retry]').disabled`), // nothing selected failed
		chromedp.Click(`[data-testid=bulk-abort]`),
		waitJS(fleetNodeStatus("second", "aborted")),
		waitJS(fleetNodeStatus("first", "completed")),
		waitJS(`(document.querySelector('[data-testid=bulk-outcomes] [data-task=first]')?.textContent ?? '').includes('already ended')`),
		waitJS(`document.querySelector('[data-testid=fleet-detail]').dataset.status === 'failed'`),
		waitJS(`document.querySelector('[data-testid=fleet-row]').dataset.status === 'failed'`))
	shot(t, ctx, "fleet-aborted")

	step(t, ctx, "Edit as YAML loads the fleet's file back into the Composer",
		chromedp.Click(`[data-testid=fleet-edit]`),
		chromedp.WaitVisible(`[data-testid=fleet-composer]`),
		waitJS(`document.querySelector('[data-testid=composer-name]').value === 'pair'`),
		waitJS(`document.querySelectorAll('[data-testid=composer-task]').length === 2`),
		waitJS(composerTaskJS(1, `[data-testid=composer-task-dep][data-dep=first]`)+`?.checked === true`),
		waitJS(composerTaskJS(0, `[data-testid=composer-task-check-text]`)+`?.value === 'true'`),
		waitJS(composerTaskJS(1, `[data-testid=composer-task-role]`)+`?.value === 'Tester'`))
}

// composerTaskJS is the JS for an element of the Composer's task number i (from 0).
func composerTaskJS(i int, sel string) string {
	return fmt.Sprintf(`document.querySelector(%q)`, composerTask(i, sel))
}

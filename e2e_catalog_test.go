package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

const judgeSystemMatch = "You are a strict yes/no judge"

// TestCatalogInTheNewGoalDialog drives the configuration layer through `serve` in Chromium, as
// a person would: the New Goal dialog's "From template" refuses an empty parameter by name,
// then fills the goal, the criterion and the template's persona; the person picks a persona of
// their own config dir instead, and the goal it starts sends that persona's prompt and
// temperature to the model. Settings → Personas lists the file with its path, and a broken
// file with its line and field; a file added while the app runs shows up without a restart.
func TestCatalogInTheNewGoalDialog(t *testing.T) {
	configDir := t.TempDir()
	os.MkdirAll(filepath.Join(configDir, "personas"), 0o755)
	house := filepath.Join(configDir, "personas", "house.md")
	os.WriteFile(house, []byte("---\nname: House style\ndescription: Our way of working\ntemperature: 0.25\n---\nHOUSE-STYLE-MARKER: small commits.\n"), 0o644)
	broken := filepath.Join(configDir, "personas", "broken.md")
	os.WriteFile(broken, []byte("---\nname: Broken\nmax_tokens: lots\n---\nx\n"), 0o644)
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

	os.WriteFile(filepath.Join(configDir, "personas", "late.md"), []byte("---\nname: Late arrival\n---\nAdded while running.\n"), 0o644)
	step(t, ctx, "a file added while the app runs shows up without a restart",
		waitJS(`!!document.querySelector('[data-testid=catalog-item][data-id=late]')`))
	step(t, ctx, "under serve, Open folder shows where the folder is on the server",
		chromedp.Click(`[data-testid=catalog-open-folder-personas]`),
		waitJS(fmt.Sprintf(`(document.querySelector('[data-testid=catalog-note]')?.textContent ?? '').includes(%q)`, filepath.Join(configDir, "personas"))))
}

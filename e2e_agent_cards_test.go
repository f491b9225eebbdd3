package main

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/clusterspace/clusterspace/backend/fleet"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

// agentCard is the selector of an element of the pane's agent card.
func agentCard(pane, sel string) string {
	return fmt.Sprintf(`[data-testid=agent-card][data-pane=%q] %s`, pane, sel)
}

func agentCardText(pane, sel string) string {
	return fmt.Sprintf(`(document.querySelector(%q)?.textContent ?? '')`, agentCard(pane, sel))
}

// TestAgentCardsEndToEnd: a fleet task run as the "engineer" persona in pane review-term; a
// person opens the Fleet Dashboard and sees that pane's agent card with its role, status,
// current task and its goal's persona by name, and steps counting up; they give the agent a
// role that is refused (the message names the field) and then one of their own with a
// purpose, which the card shows; when the fleet is aborted the card follows: idle, one task
// in its history.
func TestAgentCardsEndToEnd(t *testing.T) {
	var calls atomic.Int64
	model := everyTurn(t, func(req llmtest.Request) llmtest.Reply {
		if strings.Contains(string(req.Body), "You are a critic") {
			return llmtest.Text("PROGRESSING\nit is reviewing")
		}
		return waitUntilAborted(&calls)
	})
	srv, ctx, token, fleetID := openAppOnFleet(t, model, `name: review
tasks:
  - id: review
    goal: Review the change
    pane: review-term
    role: Reviewer
    persona: engineer
    check_shell: "true"
`)

	openFleetDashboard(t, ctx, chromedp.WaitVisible(`[data-testid=fleet-agents]`))

	step(t, ctx, "the pane's agent card shows its role, status, task and the goal's persona by name",
		chromedp.WaitVisible(agentCard("review-term", `[data-testid=agent-persona]`)),
		waitJS(agentCardText("review-term", `[data-testid=agent-persona]`)+` === 'Engineer'`),
		waitJS(agentCardText("review-term", `[data-testid=agent-role]`)+` === 'Reviewer'`),
		waitJS(agentCardText("review-term", `[data-testid=agent-status]`)+` === 'working'`),
		waitJS(agentCardText("review-term", `[data-testid=agent-task]`)+`.includes('review / review')`),
		waitJS(`!!document.querySelector(`+fmt.Sprintf("%q", agentCard("review-term", `[data-testid=agent-open-goal]`))+`)`))
	shot(t, ctx, "agent-card")

	step(t, ctx, "a role that cannot be one is refused, naming the field",
		chromedp.Click(agentCard("review-term", `[data-testid=agent-edit-role]`)),
		chromedp.WaitVisible(agentCard("review-term", `[data-testid=agent-role-input]`)),
		fleetTypeOver(agentCard("review-term", `[data-testid=agent-role-input]`), "9 lives"),
		chromedp.Click(agentCard("review-term", `[data-testid=agent-role-save]`)),
		waitJS(agentCardText("review-term", `[data-testid=agent-role-error]`)+`.startsWith('role:')`),
		waitJS(agentCardText("review-term", `[data-testid=agent-role]`)+` === 'Reviewer'`))

	step(t, ctx, "a role of one's own with a purpose is saved and shown",
		fleetTypeOver(agentCard("review-term", `[data-testid=agent-role-input]`), "Release captain"),
		chromedp.SendKeys(agentCard("review-term", `[data-testid=agent-purpose-input]`), "signs off the release"),
		chromedp.Click(agentCard("review-term", `[data-testid=agent-role-save]`)),
		waitJS(`!document.querySelector(`+fmt.Sprintf("%q", agentCard("review-term", `[data-testid=agent-role-form]`))+`)`),
		waitJS(agentCardText("review-term", `[data-testid=agent-role]`)+` === 'Release captain'`),
		waitJS(agentCardText("review-term", `[data-testid=agent-purpose]`)+` === 'signs off the release'`))
	var agents struct{ Agents []fleet.Agent }
	apiCall(t, "GET", srv.URL+"/api/agents", token, nil, &agents)
	found := false
	for _, a := range agents.Agents {
		found = found || a.PaneID == "review-term" && a.Role == "Release captain" && a.Purpose == "signs off the release"
	}
	if !found {
		t.Errorf("the server's agents after the edit: %+v", agents.Agents)
	}

	apiCall(t, "POST", srv.URL+"/api/fleets/"+fleetID+"/abort", token, map[string]any{}, nil)
	step(t, ctx, "the aborted fleet's agent goes idle, its task in its history",
		waitJS(agentCardText("review-term", `[data-testid=agent-status]`)+` === 'idle'`),
		waitJS(agentCardText("review-term", `[data-testid=agent-history]`)+` === '1'`),
		waitJS(`!document.querySelector(`+fmt.Sprintf("%q", agentCard("review-term", `[data-testid=agent-persona]`))+`)`))
}

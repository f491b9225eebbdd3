package main

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

// The scenario in the browser UI, through `serve`: the fleet's three tasks verify in
// their worktrees; "Land fleet" lands a and c and refuses b — it passes its own check, but
// the repository's fails once a has landed — showing the failing output and that b went back
// to its agent. In the app b's agent goes on at once, fixes and verifies again, and landing
// the fleet again lands b. The person's checkout, uncommitted work and all, never changes.
func TestLandUIRefusesWhatBreaksTheTargetAndLandsItOnceFixed(t *testing.T) {
	m := newFleetModel(t, func(pane string, turn int) llmtest.Reply {
		switch {
		case pane == "b-term" && turn == 2: // sent back with the repository check's output
			return toolCall("write_to_terminal", map[string]any{"pane_id": pane, "text": "echo compatible > b.txt"})
		case turn == 0:
			file := strings.TrimSuffix(pane, "-term") + ".txt"
			return toolCall("write_to_terminal", map[string]any{"pane_id": pane, "text": "echo " + strings.ToUpper(file[:1]) + " > " + file})
		}
		return fleetClaim(pane + " wrote its file")
	})
	repo := landRepo(t)
	before := checkoutDigest(t, repo)
	srv, ctx := openAppWithModel(t, m.srv)
	token := apiToken(t, srv.URL)
	var f struct{ ID string }
	apiCall(t, "POST", srv.URL+"/api/rpc/CreateFleet", token, map[string]any{
		"yaml": `name: land-demo
isolation: worktree
land: {check: "sh check.sh"}
tasks:
  - {id: a, goal: Write a.txt, pane: a-term, check_shell: "test -f a.txt"}
  - {id: b, goal: Write b.txt, pane: b-term, check_shell: "test -f b.txt"}
  - {id: c, goal: Write c.txt, pane: c-term, check_shell: "test -f c.txt", depends_on: [a]}
`,
		"policy":   map[string]any{"risk": "write_local", "sandboxDir": repo},
		"settings": map[string]any{"criticIntervalSteps": 0},
	}, &f)
	if f.ID == "" {
		t.Fatal("CreateFleet answered no fleet id")
	}
	outcome := func(task, status string) string {
		return `document.querySelector('[data-testid=land-fleet-outcome][data-task=` + task + `]')?.dataset.status === '` + status + `'`
	}
	openFleetDashboard(t, ctx,
		chromedp.WaitVisible(`[data-testid=fleet-detail]`),
		waitJS(fleetNodeStatus("a", "completed")), waitJS(fleetNodeStatus("b", "completed")), waitJS(fleetNodeStatus("c", "completed")))

	step(t, ctx, "Land fleet: a and c land, b is refused with the repository check's output and sent back",
		chromedp.Click(`[data-testid=fleet-land]`),
		chromedp.WaitVisible(`[data-testid=land-fleet-dialog]`),
		waitJS(`(document.querySelector('[data-testid=land-fleet-dialog]')?.textContent ?? '').includes('sh check.sh')`),
		chromedp.Click(`[data-testid=land-fleet-button]`),
		waitJS(outcome("a", "landed")), waitJS(outcome("b", "refused")), waitJS(outcome("c", "landed")),
		waitJS(`(document.querySelector('[data-testid=land-fleet-outcome][data-task=b] [data-testid=land-fleet-detail]')?.textContent ?? '').includes('b.txt is not compatible with a.txt')`),
		waitJS(`!!document.querySelector('[data-testid=land-fleet-outcome][data-task=b] [data-testid=land-fleet-sent-back]')`))
	axeCheck(t, ctx, "land fleet, one task refused", `[data-testid=land-fleet-dialog]`)
	shot(t, ctx, "land-fleet-refused")
	if files := gitRun(t, repo, "ls-tree", "--name-only", "main"); !strings.Contains(files, "a.txt") || !strings.Contains(files, "c.txt") || strings.Contains(files, "b.txt") {
		t.Fatalf("main after the first landing holds:\n%s", files)
	}
	if checkoutDigest(t, repo) != before {
		t.Fatal("landing changed the person's checkout")
	}

	// b's agent goes on at once with the failure: its fix is committed on its branch when it
	// has verified again.
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		out, _ := exec.Command("git", "-C", repo, "show", "fleet/"+f.ID+"/b:b.txt").Output()
		if strings.TrimSpace(string(out)) == "compatible" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("b's agent did not fix b.txt on its branch after it was sent back")
		}
	}
	step(t, ctx, "b verified again; Land fleet lands it",
		waitJS(fleetNodeStatus("b", "completed")),
		chromedp.Click(`[data-testid=land-fleet-button]`),
		waitJS(outcome("b", "landed")), waitJS(outcome("a", "already")), waitJS(outcome("c", "already")))
	shot(t, ctx, "land-fleet-landed")
	if got := gitRun(t, repo, "show", "main:b.txt"); got != "compatible" {
		t.Errorf("main's b.txt = %q", got)
	}
	if checkoutDigest(t, repo) != before {
		t.Error("landing changed the person's checkout")
	}
	var sawFailure bool
	for _, r := range m.requests("b-term") {
		sawFailure = sawFailure || strings.Contains(string(r.Body), "b.txt is not compatible with a.txt")
	}
	if !sawFailure {
		t.Error("b's agent was never given the repository check's failing output")
	}
}

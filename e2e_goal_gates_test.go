package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/clusterspace/clusterspace/backend/cli"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

// The done-gate chain through `goal run`, end to end: the built binary, a real terminal, the
// scripted model server speaking the OpenAI wire format.

// finalizeSays answers the finalize critic when the claim it reviews starts with claim (its
// prompt also lists the recent steps, earlier claims among them).
func finalizeSays(claim, verdict string) llmtest.Role {
	return llmtest.Role{Name: "finalize:" + claim, Match: llmtest.Match{System: "You review an autonomous agent's claim",
		LastUser: "THE AGENT'S CLAIM: " + claim}, Reply: llmtest.Text(verdict)}
}

// actorRequests are the requests the agent itself made (not the critic's or a judge's).
func actorRequests(srv *llmtest.Server) []llmtest.Request {
	var out []llmtest.Request
	for _, r := range srv.ChatRequests() {
		if !strings.Contains(r.System, "You review an autonomous agent's claim") {
			out = append(out, r)
		}
	}
	return out
}

// The finalize critic rejects the first claim although the criterion passed; its reason
// reaches the model, which revises; the second claim passes both gates.
func TestGoalGateFinalizeCriticRejectsThenApproves(t *testing.T) {
	srv := llmtest.New(t, llmtest.Script{
		Replies: []llmtest.Reply{
			toolCall("write_to_terminal", map[string]string{"pane_id": "term-1", "text": "touch notes.txt"}),
			toolCall("claim_complete", map[string]string{"rationale": "first: notes.txt exists"}),
			toolCall("write_to_terminal", map[string]string{"pane_id": "term-1", "text": "echo 'meeting at 10' > notes.txt"}),
			toolCall("claim_complete", map[string]string{"rationale": "second: notes.txt holds the meeting time"}),
		},
		Roles: []llmtest.Role{
			finalizeSays("first: notes.txt exists", "REJECT\nThe file is empty; the goal asks for the meeting time in it."),
			finalizeSays("second: notes.txt holds", "APPROVE\nThe file holds the meeting time."),
		},
	})
	code, out, errs := runGoalCLIOn(t, srv, "--goal", "Write the meeting time into notes.txt",
		"--check-shell", "test -f notes.txt", "--finalize-critic")
	if code != cli.ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	wantOutput(t, out,
		"verify    FAILED (1/5): the finalize critic rejected the claim: The file is empty",
		"verify    passed: the finalize critic approved: The file holds the meeting time.",
		"ended     completed",
	)
	// The model read the critic's reason before it revised.
	actor := actorRequests(srv)
	if len(actor) != 4 || !strings.Contains(actor[2].LastUser, "Verification failed: the finalize critic rejected the claim: The file is empty") {
		t.Fatalf("the third actor request's last user message: %q (%d actor requests)", lastUser(actor, 2), len(actor))
	}
}

// One bounce budget covers both gates: a claim the criterion refuses and one the finalize
// critic refuses spend a budget of two, and the goal fails saying so.
func TestGoalGateBounceBudgetSharedByCriterionAndFinalizeCritic(t *testing.T) {
	srv := llmtest.New(t, llmtest.Script{
		Replies: []llmtest.Reply{
			toolCall("claim_complete", map[string]string{"rationale": "early: surely done"}),
			toolCall("write_to_terminal", map[string]string{"pane_id": "term-1", "text": "touch notes.txt"}),
			toolCall("claim_complete", map[string]string{"rationale": "late: notes.txt exists"}),
		},
		Roles: []llmtest.Role{finalizeSays("late: notes.txt exists", "REJECT\nIt is empty.")},
	})
	code, out, errs := runGoalCLIOn(t, srv, "--goal", "Write the meeting time into notes.txt",
		"--check-shell", "test -f notes.txt", "--finalize-critic", "--bounce-budget", "2")
	if code != cli.ExitGoalFailed {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, cli.ExitGoalFailed, out, errs)
	}
	wantOutput(t, out,
		"verify    FAILED (1/2): Shell exited 1, wanted 0",
		"verify    FAILED (2/2): the finalize critic rejected the claim: It is empty",
		"ended     failed",
		"Verification failed 2 times, using up the bounce budget. Last failure: the finalize critic rejected the claim: It is empty",
	)
	if n := len(actorRequests(srv)); n != 3 {
		t.Errorf("%d actor requests, want 3: the goal must end when the budget is spent", n)
	}
}

// A manual criterion trusts the claim; the person re-opens the goal from the command line
// with feedback, and the loop resumes with that feedback in the very next request.
func TestGoalGateManualReopenedFromTheCLI(t *testing.T) {
	srv := llmtest.New(t, llmtest.Script{Replies: []llmtest.Reply{
		toolCall("claim_complete", map[string]string{"rationale": "the report is written"}),
	}})
	dataDir := t.TempDir()
	code, out, errs := runGoalCLIOn(t, srv, "--goal", "Write the report", "--check-manual", "--json", "--data-dir", dataDir)
	if code != cli.ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	goalID := goalEvents(t, out)[0].GoalID

	srv.Push(toolCall("write_to_terminal", map[string]string{"pane_id": "term-1", "text": "echo 'Q3 report' > report.txt"}),
		toolCall("claim_complete", map[string]string{"rationale": "the report now has its title"}))
	code, reopened, errs := runToEnd(t, exec.Command(testBinary(t), "goal", "reopen", goalID, "--feedback", "The report has no title.",
		"--base-url", srv.OpenAIURL(), "--model", "scripted", "--data-dir", dataDir, "--json"))
	if code != cli.ExitOK {
		t.Fatalf("reopen: exit %d\n%s\n%s", code, reopened, errs)
	}
	actor := actorRequests(srv)
	if len(actor) != 3 || !strings.Contains(actor[1].LastUser, "The goal was re-opened: The report has no title.") {
		t.Fatalf("the first request after re-opening: %q (%d requests)", lastUser(actor, 1), len(actor))
	}
	evs := goalEvents(t, reopened)
	if last := evs[len(evs)-1]; last.Type != "ended" || last.Data["status"] != "completed" || last.Data["report"] != "the report now has its title" {
		t.Fatalf("the re-opened goal ended with %+v\n%s", last, reopened)
	}
}

func lastUser(reqs []llmtest.Request, i int) string {
	if i < len(reqs) {
		return reqs[i].LastUser
	}
	return ""
}

// From the dashboard: a manual goal is re-opened with feedback, which is the first thing the
// model reads; the goal then spends its token budget and waits; raising the budget in the
// dashboard lets it go on to complete.
func TestGoalDashboardReopensAndRaisesTheBudget(t *testing.T) {
	const feedback = "The report has no title."
	model := llmtest.New(t, llmtest.Script{})
	srv := startServe(t, t.TempDir(), e2ePassword)
	addScriptedProvider(t, srv, model)
	token := apiToken(t, srv.URL)
	ctx := newBrowser(t)
	logIn(t, ctx, srv.URL, e2ePassword)
	pane := readState(t, ctx).Panes[0].ID

	model.Push(
		toolCall("claim_complete", map[string]string{"rationale": "the report is written"}),
		// After re-opening: a turn that costs more than the whole budget; its call waits.
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{llmtest.Call("write_to_terminal", map[string]string{"pane_id": pane, "text": "echo 'Q3 report'"})},
			Usage: &llmtest.Usage{Input: 50000, Output: 50}},
		toolCall("claim_complete", map[string]string{"rationale": "the report now has its title"}),
	)
	var g struct{ ID string }
	apiCall(t, "POST", srv.URL+"/api/goals", token, map[string]any{
		"paneId": pane, "goal": "Write the Q3 report", "criterion": map[string]string{"kind": "manual"},
		"policy": map[string]string{"risk": "write_local"}, "settings": map[string]any{"criticIntervalSteps": 0, "budgetTokens": 20000},
	}, &g)

	openDashboard(t, ctx)
	step(t, ctx, "the manual goal completes on its claim",
		chromedp.Click(`[data-testid=goal-row]`),
		waitJS(detailStatus("completed")))
	step(t, ctx, "re-open it with feedback",
		chromedp.SendKeys(`[data-testid=goal-reopen-input]`, feedback),
		chromedp.Click(`[data-testid=goal-reopen-send]`),
		waitJS(detailStatus("budget_exceeded")),
		chromedp.WaitVisible(`[data-testid=goal-raise-form]`))
	if body := actorRequest(t, model, 1); !strings.Contains(body, "The goal was re-opened: "+feedback) {
		t.Fatalf("the first request after re-opening lacks the feedback:\n%s", body)
	}
	step(t, ctx, "raise the token budget; the goal goes on and completes",
		chromedp.SendKeys(`[data-testid=goal-raise-tokens]`, "1000000"),
		chromedp.Click(`[data-testid=goal-raise]`),
		waitJS(detailStatus("completed")),
		waitJS(railHas("ended", "")))
	var done struct {
		Status string
		Report string
		Spec   struct{ Settings struct{ BudgetTokens int } }
	}
	apiCall(t, "GET", srv.URL+"/api/goals/"+g.ID, token, nil, &done)
	if done.Status != "completed" || done.Report != "the report now has its title" || done.Spec.Settings.BudgetTokens != 1000000 {
		t.Fatalf("after raising: %+v", done)
	}
}

// The API key named by --api-key-env stays with the app: the goal's shell, confined or not,
// does not inherit it, so `echo $VAR` cannot put it into the step log, nor can it read it from
// the app's /proc/PID/environ (the app sealed it away before starting; see backend/keyenv).
func TestGoalCLIKeyVariableIsNotInThePanes(t *testing.T) {
	const secret = "sk-test-do-not-leak-4242"
	srv := llmtest.New(t, llmtest.Script{})
	for _, sandboxed := range []bool{true, false} {
		dir := t.TempDir()
		args := []string{"--goal", "Write key.txt", "--check-shell", "test -s key.txt", "--api-key-env", "MY_SCRIPTED_KEY"}
		if sandboxed {
			args = append(args, "--sandbox", dir)
		}
		srv.Push(toolCall("write_to_terminal", map[string]string{"pane_id": "term-1", "text": `echo "key=[$MY_SCRIPTED_KEY]" > key.txt; tr '\0' '\n' < /proc/$PPID/environ >> key.txt; cat key.txt`}),
			toolCall("claim_complete", map[string]string{"rationale": "key.txt written"}))
		cmd := goalRunCmd(t, srv, dir, t.TempDir(), args...)
		cmd.Env = append(os.Environ(), "MY_SCRIPTED_KEY="+secret, "OPENAI_API_KEY="+secret+"-openai")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("sandboxed=%v: %v\n%s", sandboxed, err, out)
		}
		got, _ := os.ReadFile(filepath.Join(dir, "key.txt"))
		// PATH= shows the app's environ was read; the key must not be in it.
		if strings.Contains(string(got)+string(out), secret) || !strings.Contains(string(got), "key=[]") || !strings.Contains(string(got), "\nPATH=") {
			t.Fatalf("sandboxed=%v: the shell saw the key: key.txt %q\n%s", sandboxed, got, out)
		}
	}
	// The model server did get the key: it is the app's to use, not the pane's.
	if auth := srv.ChatRequests()[0].Header.Get("Authorization"); auth != "Bearer "+secret {
		t.Fatalf("the model server got Authorization %q", auth)
	}
}

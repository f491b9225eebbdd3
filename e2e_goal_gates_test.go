package main

import (
	"bufio"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

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

// shellReady waits for the pane's shell to show its prompt, as a careful agent does before it
// types its first command.
var shellReady = toolCall("wait_for_output", map[string]any{"pane_id": "term-1", "timeout_ms": 3000})

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
			shellReady,
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
	for _, want := range []string{
		"verify    FAILED (1/5): the finalize critic rejected the claim: The file is empty",
		"verify    passed: the finalize critic approved: The file holds the meeting time.",
		"ended     completed",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// The model read the critic's reason before it revised.
	actor := actorRequests(srv)
	if len(actor) != 5 || !strings.Contains(actor[3].LastUser, "Verification failed: the finalize critic rejected the claim: The file is empty") {
		t.Fatalf("the fourth actor request's last user message: %q (%d actor requests)", lastUser(actor, 3), len(actor))
	}
}

// One bounce budget covers both gates: a claim the criterion refuses and one the finalize
// critic refuses spend a budget of two, and the goal fails saying so.
func TestGoalGateBounceBudgetSharedByCriterionAndFinalizeCritic(t *testing.T) {
	srv := llmtest.New(t, llmtest.Script{
		Replies: []llmtest.Reply{
			toolCall("claim_complete", map[string]string{"rationale": "early: surely done"}),
			shellReady,
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
	for _, want := range []string{
		"verify    FAILED (1/2): Shell exited 1, wanted 0",
		"verify    FAILED (2/2): the finalize critic rejected the claim: It is empty",
		"ended     failed",
		"Verification failed 2 times, using up the bounce budget. Last failure: the finalize critic rejected the claim: It is empty",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if n := len(actorRequests(srv)); n != 4 {
		t.Errorf("%d actor requests, want 4: the goal must end when the budget is spent", n)
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
	goalID := goalIDOf(t, out)

	srv.Push(toolCall("write_to_terminal", map[string]string{"pane_id": "term-1", "text": "echo 'Q3 report' > report.txt"}),
		toolCall("claim_complete", map[string]string{"rationale": "the report now has its title"}))
	reopen := exec.Command(testBinary(t), "goal", "reopen", goalID, "--feedback", "The report has no title.",
		"--base-url", srv.OpenAIURL(), "--model", "scripted", "--data-dir", dataDir, "--json")
	reopened, err := reopen.CombinedOutput()
	if err != nil {
		t.Fatalf("reopen: %v\n%s", err, reopened)
	}
	actor := actorRequests(srv)
	if len(actor) != 3 || !strings.Contains(actor[1].LastUser, "The goal was re-opened: The report has no title.") {
		t.Fatalf("the first request after re-opening: %q (%d requests)", lastUser(actor, 1), len(actor))
	}
	var last struct {
		Type string         `json:"type"`
		Data map[string]any `json:"data"`
	}
	sc := bufio.NewScanner(strings.NewReader(string(reopened)))
	for sc.Scan() {
		json.Unmarshal(sc.Bytes(), &last)
	}
	if last.Type != "ended" || last.Data["status"] != "completed" || last.Data["report"] != "the report now has its title" {
		t.Fatalf("the re-opened goal ended with %+v\n%s", last, reopened)
	}
}

func goalIDOf(t *testing.T, jsonLines string) string {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(jsonLines))
	for sc.Scan() {
		var e struct {
			GoalID string `json:"goalId"`
		}
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.GoalID != "" {
			return e.GoalID
		}
	}
	t.Fatalf("no goal id in the output:\n%s", jsonLines)
	return ""
}

func lastUser(reqs []llmtest.Request, i int) string {
	if i < len(reqs) {
		return reqs[i].LastUser
	}
	return ""
}

package goal_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/goal/criterion"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
	"github.com/clusterspace/clusterspace/backend/tools"
)

func intp(n int) *int { return &n }

func TestScenarioStraightSuccess(t *testing.T) {
	t.Parallel()
	r := newRig(t, llmtest.Script{Replies: []llmtest.Reply{writeDone(), claim("wrote done.txt")}})
	g, evs := r.run(r.spec())
	if g.Status != goal.StatusCompleted || g.Report != "wrote done.txt" || g.State.Steps != 2 {
		t.Fatalf("%s %q steps=%d events=%v", g.Status, g.Report, g.State.Steps, eventTypes(evs))
	}
	// Claiming right after a write, with nothing read since, earns the guard's nudge (the
	// claim is verified all the same).
	want := []string{goal.EventStarted, goal.EventStep, goal.EventGuard, goal.EventStep, goal.EventVerificationPassed, goal.EventEnded}
	if got := slices.DeleteFunc(eventTypes(evs), func(s string) bool { return s == goal.EventStatus }); !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	if g := findEvents(evs, goal.EventGuard)[0]; g["action"] != "nudge" || g["rule"] != "verify_before_claim" {
		t.Fatalf("guard event %v", g)
	}
	// The goal prompt states the contract.
	first := r.srv.ChatRequests()[0].LastUser
	for _, s := range []string{"GOAL: Create done.txt", "SUCCESS CRITERION:", "test -f done.txt", "claim_complete", "abort_with_report", "risk=write_local"} {
		if !strings.Contains(first, s) {
			t.Errorf("goal prompt lacks %q:\n%s", s, first)
		}
	}
}

func TestScenarioPrematureClaimIsBouncedThenFixed(t *testing.T) {
	t.Parallel()
	r := newRig(t, llmtest.Script{Replies: []llmtest.Reply{claim("it is done"), writeDone(), claim("now it is")}})
	g, evs := r.run(r.spec())
	if g.Status != goal.StatusCompleted || g.State.Bounces != 1 {
		t.Fatalf("%s bounces=%d", g.Status, g.State.Bounces)
	}
	failed := findEvents(evs, goal.EventVerificationFailed)
	if len(failed) != 1 || !strings.Contains(failed[0]["detail"].(string), "Shell exited 1, wanted 0") {
		t.Fatalf("verification_failed events: %v", failed)
	}
	// The detail reached the model, in the product's words.
	if !r.sawInRequest("Verification failed: Shell exited 1, wanted 0") || !r.sawInRequest("Keep working") {
		t.Fatal("the model was not told why verification failed")
	}
}

func TestScenarioTextOnlyTurnIsNudged(t *testing.T) {
	t.Parallel()
	r := newRig(t, llmtest.Script{Replies: []llmtest.Reply{llmtest.Text("I believe I am finished."), writeDone(), claim("done")}})
	g, _ := r.run(r.spec())
	if g.Status != goal.StatusCompleted {
		t.Fatalf("status %s", g.Status)
	}
	if got := r.srv.ChatRequests()[1].LastUser; !strings.HasPrefix(got, "You must continue the loop. Call a tool") {
		t.Fatalf("second request's last user message: %q", got)
	}
}

func TestScenarioRepeatedFailureGuardThenCriticStuck(t *testing.T) {
	t.Parallel()
	check := call("run_check", map[string]any{})
	r := newRig(t, llmtest.Script{
		Replies: []llmtest.Reply{check, check, check, check, writeDone(), claim("done another way")},
		Roles:   []llmtest.Role{criticSays("STUCK\nIt keeps running the same failing health check.")},
	})
	g, evs := r.run(r.spec(func(s *goal.Spec) { s.Settings.CriticInterval = intp(3) }))
	if g.Status != goal.StatusCompleted {
		t.Fatalf("status %s: %s", g.Status, g.Report)
	}
	guards := findEvents(evs, goal.EventGuard)
	if len(guards) != 3 || guards[0]["action"] != "disable" || guards[1]["rule"] != "disabled" || guards[2]["rule"] != "verify_before_claim" {
		t.Fatalf("guard events %v", guards)
	}
	critics := findEvents(evs, goal.EventCritic)
	if len(critics) == 0 || critics[0]["verdict"] != "STUCK" {
		t.Fatalf("critic events %v", critics)
	}
	if !r.sawInRequest("CRITIC: You appear to be stuck. Reason: It keeps running the same failing health check.") {
		t.Fatal("the STUCK redirect did not reach the model")
	}
}

func TestScenarioDriftIsReanchored(t *testing.T) {
	t.Parallel()
	read := func(p string) llmtest.Reply { return call("read_file", map[string]string{"path": p}) }
	r := newRig(t, llmtest.Script{
		Replies: []llmtest.Reply{read("a"), read("b"), writeDone(), claim("done")},
		Roles:   []llmtest.Role{criticSays("MISLED\nIt is reading unrelated files.")},
	})
	g, evs := r.run(r.spec(func(s *goal.Spec) { s.Settings.CriticInterval = intp(2) }))
	if g.Status != goal.StatusCompleted || findEvents(evs, goal.EventCritic)[0]["verdict"] != "MISLED" {
		t.Fatalf("%s %v", g.Status, findEvents(evs, goal.EventCritic))
	}
	if !r.sawInRequest("CRITIC: You've drifted from the goal. Reason: It is reading unrelated files. ORIGINAL GOAL: Create done.txt in the sandbox.") {
		t.Fatal("the MISLED re-anchor did not reach the model")
	}
}

func TestScenarioCriticAchievedIsVerified(t *testing.T) {
	t.Parallel()
	r := newRig(t, llmtest.Script{
		Replies: []llmtest.Reply{writeDone()},
		Roles:   []llmtest.Role{criticSays("ACHIEVED\ndone.txt exists now.")},
	})
	g, evs := r.run(r.spec(func(s *goal.Spec) { s.Settings.CriticInterval = intp(1) }))
	if g.Status != goal.StatusCompleted || !strings.Contains(g.Report, "Critic believes goal achieved: done.txt exists now") {
		t.Fatalf("%s %q", g.Status, g.Report)
	}
	if len(findEvents(evs, goal.EventVerificationPassed)) != 1 {
		t.Fatal("the critic's claim was not verified")
	}
}

func TestScenarioAboveCeilingIsAskedAndDenied(t *testing.T) {
	t.Parallel()
	r := newRig(t, llmtest.Script{Replies: []llmtest.Reply{
		call("http_post", map[string]string{"url": "https://example.invalid/hook"}), writeDone(), claim("done")}},
		autoApprove(agent.ApprovalDeny, "not from this goal"))
	g, evs := r.run(r.spec())
	if g.Status != goal.StatusCompleted {
		t.Fatalf("status %s", g.Status)
	}
	asked := findEvents(evs, goal.EventApprovalRequested)
	if len(asked) != 1 || !strings.Contains(asked[0]["reason"].(string), "network_write, above this goal's ceiling write_local") {
		t.Fatalf("approval requests %v", asked)
	}
	if res := findEvents(evs, goal.EventApprovalResolved); len(res) != 1 || res[0]["status"] != "deny" {
		t.Fatalf("approval answers %v", res)
	}
	if !r.sawInRequest("The user denied this call. Their reason: not from this goal") {
		t.Fatal("the model did not see the denial")
	}
}

func TestScenarioDenyListRefusesWithoutAsking(t *testing.T) {
	t.Parallel()
	r := newRig(t, llmtest.Script{Replies: []llmtest.Reply{
		call("http_post", map[string]string{"url": "x"}), writeDone(), claim("done")}},
		autoApprove(agent.ApprovalAllowOnce, ""))
	g, evs := r.run(r.spec(func(s *goal.Spec) { s.Policy.Denied = []string{"http_post"} }))
	if g.Status != goal.StatusCompleted || len(findEvents(evs, goal.EventApprovalRequested)) != 0 {
		t.Fatalf("%s, approvals %d", g.Status, len(findEvents(evs, goal.EventApprovalRequested)))
	}
	if !r.sawInRequest("Refused by the goal's policy: http_post is on this goal's deny list") {
		t.Fatal("the refusal did not reach the model")
	}
}

func TestScenarioSandboxEscapesAreCaught(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	r := newRig(t, llmtest.Script{}, autoApprove(agent.ApprovalDeny, ""))
	os.Symlink(outside, filepath.Join(r.sandbox, "link"))
	os.Mkdir(r.sandbox+"-evil", 0o755)
	escapes := []string{"../escape.txt", "link/escape.txt", r.sandbox + "-evil/escape.txt", filepath.Join(r.sandbox, "sub", "..", "..", "escape.txt")}
	for _, p := range escapes {
		r.srv.Push(call("write_file", map[string]string{"path": p, "content": "x"}))
	}
	r.srv.Push(writeDone(), claim("done"))
	g, evs := r.run(r.spec())
	asked := findEvents(evs, goal.EventApprovalRequested)
	if g.Status != goal.StatusCompleted || len(asked) != len(escapes) {
		t.Fatalf("%s, %d approvals for %d escapes", g.Status, len(asked), len(escapes))
	}
	for _, a := range asked {
		if !strings.Contains(a["reason"].(string), "outside the sandbox") {
			t.Errorf("reason %q", a["reason"])
		}
	}
	for _, f := range []string{filepath.Join(outside, "escape.txt"), filepath.Join(filepath.Dir(r.sandbox), "escape.txt"), r.sandbox + "-evil/escape.txt"} {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("%s was written outside the sandbox", f)
		}
	}
}

func TestScenarioWallClockEndsWithFinalReport(t *testing.T) {
	t.Parallel()
	r := newRig(t, llmtest.Script{Replies: []llmtest.Reply{call("sleep", map[string]int{"ms": 400}),
		llmtest.Text("I waited for the build; it never finished. Next: check the build server.")}})
	g, evs := r.run(r.spec(func(s *goal.Spec) { s.Settings.WallClock = goal.Duration(300 * time.Millisecond) }))
	if g.Status != goal.StatusFailed || !strings.Contains(g.Report, "wall clock") || !strings.Contains(g.Report, "check the build server") {
		t.Fatalf("%s %q %v", g.Status, g.Report, eventTypes(evs))
	}
	last := r.srv.ChatRequests()[len(r.srv.ChatRequests())-1]
	if !strings.Contains(last.LastUser, "Stopping now") || last.JSON["tools"] != nil {
		t.Fatalf("the final turn must say why and offer no tools: %q tools=%v", last.LastUser, last.JSON["tools"])
	}
}

func TestScenarioStepCap(t *testing.T) {
	t.Parallel()
	read := call("read_file", map[string]string{"path": "x"})
	r := newRig(t, llmtest.Script{Replies: []llmtest.Reply{read, call("read_file", map[string]string{"path": "y"}), llmtest.Text("Ran out of steps.")}})
	g, _ := r.run(r.spec(func(s *goal.Spec) { s.Settings.MaxSteps = 2 }))
	if g.Status != goal.StatusFailed || !strings.Contains(g.Report, "step cap of 2 steps") || g.State.Steps != 2 {
		t.Fatalf("%s %q steps=%d", g.Status, g.Report, g.State.Steps)
	}
}

func TestScenarioAbortMidStreamIsFast(t *testing.T) {
	t.Parallel()
	r := newRig(t, llmtest.Script{Replies: []llmtest.Reply{llmtest.Stalled("Let me think about this carefully", 2)}})
	events := r.broker.Subscribe(t.Context())
	g := r.mustStart(r.spec())
	waitEvent(t, events, goal.EventDelta) // the model is streaming
	start := time.Now()
	if err := r.svc.Abort(context.Background(), g.ID); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("abort took %v", d)
	}
	g, _ = r.wait(g.ID)
	if g.Status != goal.StatusAborted {
		t.Fatalf("status %s", g.Status)
	}
}

func TestScenarioBounceBudgetSpent(t *testing.T) {
	t.Parallel()
	r := newRig(t, llmtest.Script{Replies: []llmtest.Reply{claim("done"), claim("really done")}})
	g, evs := r.run(r.spec(func(s *goal.Spec) { s.Settings.BounceBudget = 2 }))
	if g.Status != goal.StatusFailed || !strings.Contains(g.Report, "Verification failed 2 times") || !strings.Contains(g.Report, "Shell exited 1") {
		t.Fatalf("%s %q", g.Status, g.Report)
	}
	if n := len(findEvents(evs, goal.EventVerificationFailed)); n != 2 {
		t.Fatalf("%d verification failures", n)
	}
}

func TestScenarioBudgetPausesUntilRaised(t *testing.T) {
	t.Parallel()
	costly := writeDone()
	costly.Usage = &llmtest.Usage{Input: 40, Output: 20}
	r := newRig(t, llmtest.Script{Replies: []llmtest.Reply{costly, claim("done")}})
	g := r.mustStart(r.spec(func(s *goal.Spec) { s.Settings.BudgetTokens = 50 }))
	waitStatus(t, r, g.ID, goal.StatusBudgetExceeded, 10*time.Second)
	if err := r.svc.RaiseBudget(context.Background(), g.ID, 0, 1_000_000); err != nil {
		t.Fatal(err)
	}
	g, _ = r.wait(g.ID)
	if g.Status != goal.StatusCompleted || g.State.Usage.Total() < 60 {
		t.Fatalf("%s usage %+v", g.Status, g.State.Usage)
	}
}

func TestScenarioRestartMidGoalResumesWithNoStepLost(t *testing.T) {
	t.Parallel()
	r := newRig(t, llmtest.Script{Replies: []llmtest.Reply{
		call("write_file", map[string]string{"path": "a.txt", "content": "a"}),
		llmtest.Stalled("working on the next file", 3),
	}})
	events := r.broker.Subscribe(t.Context())
	g := r.mustStart(r.spec())
	waitEvent(t, events, goal.EventDelta) // the second turn is streaming: step 1 is done
	r.svc.Shutdown()                      // the app goes away mid-stream
	r.broker.Shutdown()
	if cur, _ := r.svc.Get(context.Background(), g.ID); cur.Status != goal.StatusInterrupted {
		t.Fatalf("after shutdown: %s", cur.Status)
	}

	r.srv.Push(writeDone(), claim("done after restart"))
	r.start() // a new process on the same store
	if cur, _ := r.svc.Get(context.Background(), g.ID); cur.Status != goal.StatusInterrupted || cur.State.Steps != 1 {
		t.Fatalf("after restart: %s steps=%d", cur.Status, cur.State.Steps)
	}
	if err := r.svc.Resume(context.Background(), g.ID); err != nil {
		t.Fatal(err)
	}
	g, evs := r.wait(g.ID)
	if g.Status != goal.StatusCompleted || g.State.Steps != 3 {
		t.Fatalf("%s steps=%d", g.Status, g.State.Steps)
	}
	steps, _ := r.svc.Steps(context.Background(), g.ID, 0, 100)
	var tools_ []string
	for i, s := range steps {
		if s.Index != i+1 {
			t.Fatalf("step indices %v", steps)
		}
		tools_ = append(tools_, s.Tool)
	}
	if !slices.Equal(tools_, []string{"write_file", "write_file", tools.ToolClaimComplete}) {
		t.Fatalf("steps %v", tools_)
	}
	if !slices.Contains(eventTypes(evs), goal.EventResumed) || !r.sawInRequest("The app restarted and this goal was resumed") {
		t.Fatal("no resume marker")
	}
}

func TestScenarioStartRefusesBadInput(t *testing.T) {
	t.Parallel()
	r := newRig(t, llmtest.Script{})
	cases := map[string]func(*goal.Spec){
		"goal":                  func(s *goal.Spec) { s.Goal = "  " },
		"paneId":                func(s *goal.Spec) { s.PaneID = "" },
		"policy.sandboxDir":     func(s *goal.Spec) { s.Policy.SandboxDir = "/no/such/dir" },
		"policy.allowedTools":   func(s *goal.Spec) { s.Policy.Allowed = []string{"teleport"} },
		"criterion.command":     func(s *goal.Spec) { s.Criterion = criterion.Spec{Kind: "shell"} },
		"dependsOn":             func(s *goal.Spec) { s.DependsOn = []string{"goal-nope"} },
		"settings.budgetTokens": func(s *goal.Spec) { s.Settings.BudgetTokens = -1 },
	}
	for field, edit := range cases {
		_, err := r.svc.Start(context.Background(), r.spec(edit))
		fe, ok := err.(*goal.FieldError)
		if !ok || !strings.HasPrefix(fe.Field, strings.Split(field, ".")[0]) {
			t.Errorf("%s: got %v", field, err)
		}
	}
	if gs, _ := r.svc.List(context.Background()); len(gs) != 0 {
		t.Fatalf("refused goals were stored: %d", len(gs))
	}
}

// A call waiting for approval when the app stops is asked again when the goal resumes, and
// runs once the user allows it.
func TestScenarioPendingApprovalIsAskedAgainAfterRestart(t *testing.T) {
	t.Parallel()
	r := newRig(t, llmtest.Script{Replies: []llmtest.Reply{call("http_post", map[string]string{"url": "https://example.invalid"})}})
	events := r.broker.Subscribe(t.Context())
	g := r.mustStart(r.spec())
	waitEvent(t, events, goal.EventApprovalRequested)
	r.svc.Shutdown() // the app stops while the user has not answered
	r.broker.Shutdown()

	r.srv.Push(writeDone(), claim("posted, then wrote done.txt"))
	r.start()
	events = r.broker.Subscribe(t.Context())
	if err := r.svc.Resume(context.Background(), g.ID); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, events, goal.EventApprovalRequested)
	pending, _ := r.svc.PendingApprovals(context.Background())
	if len(pending) != 1 || pending[0].Tool != "http_post" {
		t.Fatalf("pending after resume: %+v", pending)
	}
	if _, err := r.svc.AnswerApproval(context.Background(), pending[0].ID, agent.ApprovalAllowOnce, ""); err != nil {
		t.Fatal(err)
	}
	g, evs := r.wait(g.ID)
	if g.Status != goal.StatusCompleted || !r.sawInRequest("posted to https://example.invalid") {
		t.Fatalf("%s %v", g.Status, eventTypes(evs))
	}
	if n := len(findEvents(evs, goal.EventApprovalRequested)); n != 2 {
		t.Fatalf("%d approval requests, want 2 (before and after the restart)", n)
	}
}

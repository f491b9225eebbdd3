package fleet_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/fleet"
	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
	"github.com/clusterspace/clusterspace/backend/tools"
)

func agentOf(t *testing.T, r *rig, pane string) fleet.Agent {
	t.Helper()
	as, err := r.eng.Fleets.Agents(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range as {
		if a.PaneID == pane {
			return a
		}
	}
	t.Fatalf("no agent for pane %s in %+v", pane, as)
	return fleet.Agent{}
}

// Each pane's agent has a role, a purpose, a status, its current task with progress, a
// queue, a history and an inbox; a role set (or context shared) while its task waits reaches
// that task's first prompt; all of it survives a restart.
func TestAgentsCarryRoleQueueHistoryAndInbox(t *testing.T) {
	aRunning := make(chan struct{}, 1)
	r := newRig(t, func(pane string, turn int, req llmtest.Request) llmtest.Reply {
		if pane == "a-term" && turn == 0 {
			aRunning <- struct{}{}
			return call("wait", map[string]int{"ms": 3000})
		}
		return claim(pane + " done")
	})
	f := r.start(`
name: crew
tasks:
  - {id: a, goal: Build it, role: builder, check_shell: "true"}
  - {id: b, goal: Review it, depends_on: [a], check_shell: "true"}
`)
	<-aRunning
	chat := tools.Call{WorkspaceID: "ws-x"}
	if res := r.call(context.Background(), chat, "set_agent_role", map[string]string{"pane_id": "b-term", "role": "reviewer", "purpose": "PURPOSE-9: read every diff"}); res.IsError {
		t.Fatalf("set_agent_role: %s", res.Text)
	}
	if res := r.call(context.Background(), chat, "share_context", map[string]string{"to_pane_id": "b-term", "context": "INBOX-5: the build is in dist/"}); res.IsError || !strings.Contains(res.Text, "task b will start there") {
		t.Fatalf("share_context: %+v", res)
	}
	// While a runs: a works on task a (as a Builder, from the file), b waits with task b queued.
	a, b := agentOf(t, r, "a-term"), agentOf(t, r, "b-term")
	if a.Status != fleet.AgentWorking || a.Role != "Builder" || a.CurrentTask == nil || a.CurrentTask.TaskID != "a" || a.Progress == nil {
		t.Fatalf("agent a while its task runs: %+v", a)
	}
	if b.Status != fleet.AgentWaiting || b.Role != "Reviewer" || len(b.Queue) != 1 || b.Queue[0].TaskID != "b" ||
		len(b.Inbox) != 1 || b.Inbox[0].Delivered || !strings.Contains(b.Inbox[0].From, "ws-x") {
		t.Fatalf("agent b while it waits: %+v", b)
	}
	status := r.call(context.Background(), chat, "get_fleet_status", map[string]any{"fleet_id": f.ID}).Text
	for _, want := range []string{`"agents"`, `"role": "Reviewer"`, `"status": "waiting"`, `"inbox_undelivered": 1`, `"current_task": "` + f.ID + `/a"`} {
		if !strings.Contains(status, want) {
			t.Errorf("get_fleet_status lacks %s:\n%s", want, status)
		}
	}
	if f = r.wait(f.ID); f.Status != fleet.StatusCompleted {
		t.Fatalf("fleet %s", f.Status)
	}
	first := string(r.requests("b-term")[0].Body)
	for _, want := range []string{"Your role in this fleet: Reviewer. Your purpose: PURPOSE-9: read every diff", "INBOX-5: the build is in dist/"} {
		if !strings.Contains(first, want) {
			t.Errorf("b's first prompt lacks %q", want)
		}
	}
	// Bad input names the field and changes nothing.
	for _, c := range []struct {
		args map[string]string
		want string
	}{
		{map[string]string{"pane_id": "b-term", "role": "!!"}, "role: \"!!\" is not a role"},
		{map[string]string{"pane_id": "nowhere", "role": "Tester"}, "pane_id: there is no pane nowhere"},
	} {
		if res := r.call(context.Background(), chat, "set_agent_role", c.args); !res.IsError || !strings.Contains(res.Text, c.want) {
			t.Errorf("set_agent_role %v: %+v, want %q", c.args, res, c.want)
		}
	}

	r.close()
	r.open()
	b = agentOf(t, r, "b-term")
	if b.Status != fleet.AgentIdle || b.Role != "Reviewer" || !strings.HasPrefix(b.Purpose, "PURPOSE-9") || len(b.History) != 1 ||
		b.History[0].Status != fleet.TaskCompleted || len(b.Inbox) != 1 || !b.Inbox[0].Delivered {
		t.Fatalf("agent b after a restart: %+v", b)
	}
}

// share_context with broadcast reaches every other agent of the caller's fleet: a running
// one on its next turn, a waiting one in its first prompt; not the caller itself.
func TestShareContextBroadcastReachesEveryAgentOfTheFleet(t *testing.T) {
	// The scripted server answers one request at a time, so the boss polls rather than blocks:
	// it broadcasts once the worker has had its first turn and is inside its wait.
	var workerAsked, sent atomic.Bool
	var broadcastTurn atomic.Int32
	r := newRig(t, func(pane string, turn int, req llmtest.Request) llmtest.Reply {
		switch {
		case pane == "boss" && !sent.Load() && !workerAsked.Load():
			return call("wait", map[string]int{"ms": 100})
		case pane == "boss" && !sent.Load():
			sent.Store(true)
			broadcastTurn.Store(int32(turn))
			return call("share_context", map[string]any{"broadcast": true, "context": "BROADCAST-7: use port 8080"})
		case pane == "worker" && turn == 0:
			workerAsked.Store(true)
			return call("wait", map[string]int{"ms": 3000})
		}
		return claim(pane + " done")
	})
	f := r.run(`
name: broadcast
tasks:
  - {id: boss, goal: Lead, pane: boss, check_shell: "true"}
  - {id: work, goal: Work, pane: worker, check_shell: "true"}
  - {id: later, goal: Follow up, pane: later, depends_on: [boss], check_shell: "true"}
`)
	if f.Status != fleet.StatusCompleted {
		t.Fatalf("fleet %s: %+v", f.Status, f.Tasks)
	}
	const shared = "BROADCAST-7: use port 8080"
	res := r.requests("boss")[broadcastTurn.Load()+1].LastToolResult()
	if !strings.Contains(res, "Broadcast to the 2 other agents") || !strings.Contains(res, "next turn") || !strings.Contains(res, "first prompt") {
		t.Fatalf("share_context broadcast said: %s", res)
	}
	worker := r.requests("worker")
	if strings.Contains(string(worker[0].Body), shared) || !strings.Contains(string(worker[1].Body), shared) {
		t.Error("the running worker did not get the broadcast on its next turn (only)")
	}
	if !strings.Contains(string(r.requests("later")[0].Body), shared) {
		t.Error("the waiting task did not start with the broadcast")
	}
	for _, req := range r.requests("boss") {
		if strings.Contains(string(req.Body), "[Context shared by") {
			t.Error("the broadcaster got its own broadcast")
		}
	}
	// Outside any fleet there is no one to broadcast to.
	if res := r.call(context.Background(), tools.Call{WorkspaceID: "ws-lonely"}, "share_context", map[string]any{"broadcast": true, "context": "x"}); !res.IsError || !strings.Contains(res.Text, "no running fleet") {
		t.Fatalf("broadcast outside a fleet: %+v", res)
	}
}

// complete_task is a claim on the task's own criterion: while the criterion fails the task
// does not complete; fail_task ends the caller's own task failed and blocks its dependants.
func TestCompleteTaskGoesThroughTheCriterionAndFailTaskBlocks(t *testing.T) {
	var r *rig
	r = newRig(t, func(pane string, turn int, req llmtest.Request) llmtest.Reply {
		switch {
		case pane == "x-term" && turn == 0:
			return call("complete_task", map[string]string{"task_id": "y", "summary": "y is done"})
		case pane == "x-term" && turn == 1:
			return call("complete_task", map[string]string{"summary": "done.txt is written"})
		case pane == "x-term" && strings.Contains(req.LastUser, "Verification failed"):
			os.WriteFile(filepath.Join(r.dir, "done.txt"), []byte("ok"), 0o644)
			return call("complete_task", map[string]string{"summary": "now done.txt is there"})
		case pane == "y-term":
			return call("fail_task", map[string]string{"reason": "NO-COMPILER on this host"})
		}
		return claim(pane + " done")
	})
	f := r.run(`
name: report
tasks:
  - {id: x, goal: Write done.txt, check_shell: "test -f done.txt"}
  - {id: y, goal: Compile, check_shell: "true"}
  - {id: z, goal: Ship, depends_on: [y], check_shell: "true"}
`)
	x, y, z := taskOf(t, f, "x"), taskOf(t, f, "y"), taskOf(t, f, "z")
	if x.Status != fleet.TaskCompleted || y.Status != fleet.TaskFailed || z.Status != fleet.TaskBlocked || f.Status != fleet.StatusFailed {
		t.Fatalf("x %s, y %s, z %s, fleet %s", x.Status, y.Status, z.Status, f.Status)
	}
	steps, _ := r.eng.Goals.Steps(context.Background(), x.GoalID, 0, 10)
	if len(steps) < 3 || !steps[0].IsError || !strings.Contains(steps[0].Result, "only the agent of task y can complete it") {
		t.Fatalf("complete_task on another's task: %+v", steps)
	}
	evs, _ := r.eng.Goals.History(context.Background(), x.GoalID, 0)
	failedFirst := false
	for _, e := range evs {
		if e.Type == goal.EventVerificationFailed {
			failedFirst = true
		}
	}
	if !failedFirst || !strings.Contains(x.Report, "now done.txt is there") {
		t.Fatalf("complete_task was not verified first (verification failed seen: %v); report %q", failedFirst, x.Report)
	}
	if !strings.Contains(y.Report, "Failed by its agent (fail_task): NO-COMPILER on this host") || !strings.Contains(z.Reason, "task y, which it depends on, failed") {
		t.Fatalf("y report %q, z reason %q", y.Report, z.Reason)
	}
}

// fail_task ends a task the caller assigned (its goal stops, the task fails with the reason),
// and nobody else's.
func TestFailTaskEndsATaskTheCallerAssigned(t *testing.T) {
	r := newRig(t, func(pane string, turn int, req llmtest.Request) llmtest.Reply {
		if pane == "worker" {
			return call("wait", map[string]int{"ms": 60000})
		}
		return claim("done")
	})
	chat := tools.Call{WorkspaceID: "ws-boss"}
	res := r.call(context.Background(), chat, "assign_task", map[string]any{"pane_id": "worker", "description": "Work forever", "criterion": map[string]any{"check_shell": "true"}})
	if res.IsError {
		t.Fatal(res.Text)
	}
	r.waitAsked("worker")
	if res := r.call(context.Background(), tools.Call{WorkspaceID: "ws-other"}, "fail_task", map[string]string{"task_id": "task-1", "reason": "x"}); !res.IsError || !strings.Contains(res.Text, "you assigned no running fleet's task task-1") {
		t.Fatalf("fail_task by a stranger: %+v", res)
	}
	start := time.Now()
	if res := r.call(context.Background(), chat, "fail_task", map[string]string{"task_id": "task-1", "reason": "NOT-NEEDED any more"}); res.IsError {
		t.Fatal(res.Text)
	}
	var fleetID string
	fs, _ := r.eng.Fleets.List(context.Background())
	for _, f := range fs {
		if f.Spec.Owner == "chat:ws-boss" {
			fleetID = f.ID
		}
	}
	f := r.wait(fleetID)
	task := taskOf(t, f, "task-1")
	if task.Status != fleet.TaskFailed || !strings.Contains(task.Report, "Failed by the chat of workspace ws-boss (fail_task): NOT-NEEDED any more") {
		t.Fatalf("task %s: %q", task.Status, task.Report)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("the worker took %s to stop", d)
	}
}

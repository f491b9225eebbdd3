package inbox_test

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/fleet"
	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/inbox"
	"github.com/clusterspace/clusterspace/backend/pubsub"
	"github.com/clusterspace/clusterspace/backend/store"
	"github.com/clusterspace/clusterspace/backend/store/storetest"
	"github.com/clusterspace/clusterspace/backend/terminal"
	"github.com/clusterspace/clusterspace/backend/terminal/terminaltest"
	"github.com/clusterspace/clusterspace/backend/workspace"
	"github.com/clusterspace/clusterspace/backend/worktree"
)

func TestMain(m *testing.M) {
	os.Exit(terminaltest.Run(m, "inbox", nil))
}

func TestOrderIsUrgencyThenAge(t *testing.T) {
	t.Parallel()
	at := func(min int) time.Time { return time.Date(2026, 1, 1, 12, min, 0, 0, time.UTC) }
	items := []inbox.Item{
		{ID: "command_done:p", Kind: inbox.KindCommandDone, Since: at(1)},
		{ID: "agent_idle:p", Kind: inbox.KindAgentIdle, Since: at(0)},
		{ID: "review:f/t", Kind: inbox.KindReview, Since: at(0)},
		{ID: "task_blocked:f/b", Kind: inbox.KindTaskBlocked, Since: at(5)},
		{ID: "task_failed:f/a", Kind: inbox.KindTaskFailed, Since: at(4)},
		{ID: "approval:new", Kind: inbox.KindApproval, Since: at(9)},
		{ID: "approval:old", Kind: inbox.KindApproval, Since: at(2)},
		{ID: "agent_asking:q", Kind: inbox.KindAgentAsking, Since: at(8)},
	}
	for i := range items {
		items[i].Urgency = items[i].Kind.Urgency()
	}
	inbox.Sort(items)
	var got []string
	for _, it := range items {
		got = append(got, it.ID)
	}
	want := []string{"approval:old", "approval:new", "task_failed:f/a", "task_blocked:f/b", "review:f/t", "agent_asking:q", "agent_idle:p", "command_done:p"}
	if !slices.Equal(got, want) {
		t.Fatalf("order:\n got %v\nwant %v", got, want)
	}
}

// rig is the inbox over a real store, workspace service, approval desk and terminal manager;
// the fleets are what the test sets.
type rig struct {
	ws        *workspace.Service
	approvals *agent.Approvals
	terms     *terminal.Manager
	fleets    []fleet.Fleet
	store     *store.Store
	svc       *inbox.Service
	events    *pubsub.Broker[inbox.List]
}

func newRig(t *testing.T, long time.Duration) *rig {
	t.Helper()
	ctx := context.Background()
	st, _ := storetest.Open(t)
	wsEvents := pubsub.NewBroker[workspace.List]()
	t.Cleanup(wsEvents.Shutdown)
	ws, err := workspace.NewService(ctx, st, wsEvents)
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{ws: ws, approvals: agent.NewApprovals(st, nil), terms: terminal.NewManager(terminal.Options{}),
		store: st, events: pubsub.NewBroker[inbox.List]()}
	t.Cleanup(r.terms.Shutdown)
	t.Cleanup(r.events.Shutdown)
	r.svc, err = inbox.NewService(inbox.Sources{
		Approvals:  func(ctx context.Context) ([]agent.Approval, error) { return r.approvals.Stored(ctx, nil) },
		Goal:       st.Goal,
		Fleets:     func(context.Context) ([]fleet.Fleet, error) { return r.fleets, nil },
		Workspaces: ws.List,
	}, r.events, inbox.Options{Probe: inbox.TerminalProbe(r.terms), LongCommand: long, PollEvery: 100 * time.Millisecond,
		Wakers: []pubsub.Source{pubsub.From(wsEvents, "workspaces")}})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func ids(l inbox.List) []string {
	var out []string
	for _, it := range l.Items {
		out = append(out, it.ID)
	}
	return out
}

// waitList polls the inbox until its ids are want, or fails with the last list read.
func waitList(t *testing.T, svc *inbox.Service, want []string) inbox.List {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		l, err := svc.List(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if slices.Equal(ids(l), want) {
			return l
		}
		if time.Now().After(deadline) {
			t.Fatalf("inbox:\n got %v\nwant %v\n%+v", ids(l), want, l.Items)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// One read across two workspaces: a goal's approval (with its goal's pane), a failed and a
// blocked fleet task, a task whose branch waits to land, and a program pane idle at its prompt,
// in that order; the landed task and the pane in front of the person are left out.
func TestListAssemblesEveryKindInOrder(t *testing.T) {
	r := newRig(t, time.Hour)
	ctx := context.Background()
	w1, err := r.ws.Create(ctx, "one")
	if err != nil {
		t.Fatal(err)
	}
	w2, err := r.ws.Create(ctx, "two")
	if err != nil {
		t.Fatal(err)
	}
	goalPane, agentPane, frontPane := w1.Panes[0].ID, w2.Panes[1].ID, w2.Panes[2].ID
	now := time.Now().UTC()
	g := goal.Goal{ID: "g1", Spec: goal.Spec{PaneID: goalPane, Goal: "deploy the site"}, Status: goal.StatusAwaitingApproval, CreatedAt: now, UpdatedAt: now}
	if err := r.store.CommitGoal(ctx, &goal.Commit{Goal: &g}); err != nil {
		t.Fatal(err)
	}
	if err := r.approvals.Save(ctx, agent.Approval{ID: "ap1", GoalID: "g1", CallID: "c", Tool: "run_command", Risk: "network",
		Reason: "curl to the outside", Status: agent.ApprovalPending, CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	ended := now.Add(-time.Minute)
	wt := &worktree.Worktree{Branch: "fleet/f1/c"}
	r.fleets = []fleet.Fleet{{ID: "f1", Name: "build", Tasks: []fleet.Task{
		{TaskSpec: fleet.TaskSpec{ID: "a", Pane: w1.Panes[1].ID}, Status: fleet.TaskFailed, EndedAt: &ended, Report: "claim\nverification failed: no file"},
		{TaskSpec: fleet.TaskSpec{ID: "b", Pane: "pane-never-made"}, Status: fleet.TaskBlocked, Reason: "a failed", CreatedAt: now.Add(-2 * time.Minute)},
		{TaskSpec: fleet.TaskSpec{ID: "c", Pane: w1.Panes[2].ID}, Status: fleet.TaskCompleted, EndedAt: &ended, Worktree: wt},
		{TaskSpec: fleet.TaskSpec{ID: "d"}, Status: fleet.TaskCompleted, EndedAt: &ended, Worktree: wt, Review: &fleet.Review{Land: fleet.LandLanded}},
		{TaskSpec: fleet.TaskSpec{ID: "e"}, Status: fleet.TaskRunning},
	}}}
	// Two program panes at a prompt: one behind, one in front of the person.
	prompt := []string{"sh", "-c", "printf 'ready> '; read x"}
	for _, p := range []string{agentPane, frontPane} {
		if _, err := r.ws.SetLaunch(ctx, w2.ID, p, &workspace.Launch{Template: "custom", Command: "sh"}); err != nil {
			t.Fatal(err)
		}
		if _, err := r.terms.Open(ctx, terminal.Spec{PaneID: p, Command: prompt, Dir: t.TempDir()}); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.ws.Activate(ctx, w2.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := r.ws.Focus(ctx, w2.ID, frontPane); err != nil {
		t.Fatal(err)
	}

	l := waitList(t, r.svc, []string{"approval:ap1", "task_blocked:f1/b", "task_failed:f1/a", "review:f1/c", "agent_idle:" + agentPane})
	ap, blocked, failed, review, idle := l.Items[0], l.Items[1], l.Items[2], l.Items[3], l.Items[4]
	if ap.PaneID != goalPane || ap.WorkspaceID != w1.ID || ap.GoalID != "g1" || ap.ApprovalID != "ap1" || ap.Title != "Approve run_command (network) for goal: deploy the site" {
		t.Errorf("approval item: %+v", ap)
	}
	if blocked.PaneID != "" || blocked.FleetID != "f1" || blocked.TaskID != "b" || blocked.Detail != "a failed" {
		t.Errorf("blocked task item (its pane was never made): %+v", blocked)
	}
	if failed.PaneID != w1.Panes[1].ID || failed.WorkspaceID != w1.ID || failed.Detail != "verification failed: no file" {
		t.Errorf("failed task item: %+v", failed)
	}
	if review.Detail != "branch fleet/f1/c" || review.Urgency != 2 {
		t.Errorf("review item: %+v", review)
	}
	if idle.WorkspaceID != w2.ID || idle.Kind != inbox.KindAgentIdle || idle.Urgency != 4 {
		t.Errorf("idle pane item: %+v", idle)
	}

	// Answered, the approval leaves; looked at, the idle pane leaves and the other one comes.
	if err := r.approvals.Save(ctx, agent.Approval{ID: "ap1", GoalID: "g1", CallID: "c", Tool: "run_command", Status: agent.ApprovalDeny, CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.ws.Focus(ctx, w2.ID, agentPane); err != nil {
		t.Fatal(err)
	}
	waitList(t, r.svc, []string{"task_blocked:f1/b", "task_failed:f1/a", "review:f1/c", "agent_idle:" + frontPane})
}

// A long command that ends in a shell pane behind is told, with its program and how long it
// ran; a short one is not; typing in the pane clears it. The change reaches the event stream.
func TestLongCommandFinishedBehindIsTold(t *testing.T) {
	r := newRig(t, 1500*time.Millisecond)
	ctx := context.Background()
	w, err := r.ws.Create(ctx, "shells")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.ws.Activate(ctx, w.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := r.ws.Focus(ctx, w.ID, w.Panes[0].ID); err != nil {
		t.Fatal(err)
	}
	pane := w.Panes[1].ID
	dir := t.TempDir()
	if _, err := r.terms.Open(ctx, terminal.Spec{PaneID: pane, Shell: "/bin/bash", Dir: dir, Env: []string{"HOME=" + dir}}); err != nil {
		t.Fatal(err)
	}
	sub, stop := context.WithCancel(ctx)
	defer stop()
	events := r.events.Subscribe(sub)
	r.svc.Start()
	defer r.svc.Shutdown()

	write := func(s string) {
		if err := r.terms.Write(pane, "", []byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(500 * time.Millisecond) // the shell's first prompt
	write("sleep 0.3\r")
	time.Sleep(time.Second)
	waitList(t, r.svc, nil) // short: nothing to tell
	write("sleep 2.5\r")
	l := waitList(t, r.svc, []string{"command_done:" + pane})
	if it := l.Items[0]; it.Detail != "sleep ran 3s" && it.Detail != "sleep ran 2s" || it.WorkspaceID != w.ID {
		t.Errorf("finished command item: %+v", it)
	}
	got := false
	for !got {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatal("the inbox's events ended")
			}
			got = ev.Type == inbox.EventChanged && slices.Equal(ids(ev.Payload), []string{"command_done:" + pane})
		case <-time.After(10 * time.Second):
			t.Fatal("no changed event carried the finished command")
		}
	}
	write("\r") // the person types in it: seen
	waitList(t, r.svc, nil)
}

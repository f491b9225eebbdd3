package notify_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/config"
	"github.com/clusterspace/clusterspace/backend/engine"
	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/goal/criterion"
	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
	"github.com/clusterspace/clusterspace/backend/notify"
	"github.com/clusterspace/clusterspace/backend/notify/notifytest"
	"github.com/clusterspace/clusterspace/backend/policy"
	"github.com/clusterspace/clusterspace/backend/tools"
)

func TestGoalNoticeTable(t *testing.T) {
	t.Parallel()
	ev := func(typ string, data any) goal.Event {
		b, _ := json.Marshal(data)
		return goal.Event{GoalID: "g1", Type: typ, Data: b}
	}
	for _, c := range []struct {
		name        string
		e           goal.Event
		title, body string
	}{
		{"completed", ev(goal.EventEnded, map[string]any{"status": "completed"}), "Goal completed", "Write done.txt"},
		{"failed", ev(goal.EventEnded, map[string]any{"status": "failed", "report": "clock"}), "Goal failed", "Write done.txt"},
		{"aborted", ev(goal.EventEnded, map[string]any{"status": "aborted"}), "Goal aborted", "Write done.txt"},
		{"interrupted is not an end", ev(goal.EventEnded, map[string]any{"status": "interrupted"}), "", ""},
		{"approval", ev(goal.EventApprovalRequested, map[string]any{"id": "a1", "tool": "write_to_terminal", "status": "pending"}),
			notify.TitleApproval, "write_to_terminal: Write done.txt"},
		{"an answered approval", ev(goal.EventApprovalRequested, map[string]any{"id": "a1", "tool": "x", "status": "allowed"}), "", ""},
		{"a step", ev(goal.EventStep, map[string]any{"tool": "x"}), "", ""},
		{"bad data", goal.Event{Type: goal.EventEnded, Data: json.RawMessage(`"x"`)}, "", ""},
	} {
		title, body, ok := notify.GoalNotice(c.e, "Write done.txt")
		if title != c.title || body != c.body || ok != (c.title != "") {
			t.Errorf("%s: %q %q %v", c.name, title, body, ok)
		}
	}
}

// TestGoalsRaiseOneNotificationEach runs real goals on the engine the app uses, against the
// scripted model server, with the desktop's goal watcher sending to dunst: a goal that ends
// raises one notification ("Goal completed", the goal's text), a goal that needs approval one
// ("A goal needs your approval", the tool and the goal), its abort one more; none while the
// window has the focus.
func TestGoalsRaiseOneNotificationEach(t *testing.T) {
	d := startDunst(t)
	model := llmtest.New(t, llmtest.Script{Replies: []llmtest.Reply{
		llmtest.Calls(llmtest.Call("claim_complete", map[string]string{"rationale": "the check passes"})),
		llmtest.Calls(llmtest.Call("write_to_terminal", map[string]string{"pane_id": "term-1", "text": "echo hi"})),
		llmtest.Calls(llmtest.Call("claim_complete", map[string]string{"rationale": "the check passes"})),
	}})
	ctx := context.Background()
	eng, err := engine.Open(ctx, t.TempDir(), engine.WithPaneExists(func(string) bool { return true }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	if _, err := eng.Providers.Save(ctx, "", config.ProviderInput{ProviderSettings: config.ProviderSettings{Name: "Scripted", Kind: llm.KindOpenAI,
		BaseURL: model.OpenAIURL(), Model: "scripted"}}); err != nil {
		t.Fatal(err)
	}

	n := newNotifier(t)
	var focused atomic.Bool
	watchCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		notify.WatchGoals(watchCtx, eng.SubscribeGoals(watchCtx), notify.GoalWatch{
			GoalText: func(ctx context.Context, id string) string { g, _ := eng.Goals.Get(ctx, id); return g.Spec.Goal },
			Send:     func(ctx context.Context, title, body string) error { _, err := n.Send(ctx, title, body); return err },
			Quiet:    focused.Load,
		})
	}()
	t.Cleanup(func() { stop(); <-done })

	zero := 0
	spec := func(text string, ceiling tools.Risk) goal.Spec {
		return goal.Spec{PaneID: "term-1", Goal: text, Criterion: criterion.Spec{Kind: "shell", Command: "true"},
			Policy: policy.Policy{Ceiling: ceiling}, Settings: goal.Settings{CriticInterval: &zero, WorkDir: t.TempDir()}}
	}
	g, err := eng.Goals.Start(ctx, spec("Write ok into done.txt", tools.WriteLocal))
	if err != nil {
		t.Fatal(err)
	}
	waitStatus(t, eng, g.ID, goal.StatusCompleted)
	got := waitShown(t, d, 1)
	if got[0] != (notifytest.Notification{AppName: "ClusterSpace", Summary: "Goal completed", Body: "Write ok into done.txt"}) {
		t.Fatalf("for the completed goal dunst shows %+v", got[0])
	}

	g, err = eng.Goals.Start(ctx, spec("Say hi in the terminal", tools.ReadOnly))
	if err != nil {
		t.Fatal(err)
	}
	got = waitShown(t, d, 2)
	if got[1] != (notifytest.Notification{AppName: "ClusterSpace", Summary: "A goal needs your approval", Body: "write_to_terminal: Say hi in the terminal"}) {
		t.Fatalf("for the approval dunst shows %+v", got[1])
	}
	time.Sleep(300 * time.Millisecond) // room for a second, wrong notification to arrive
	waitShown(t, d, 2)
	if err := eng.Goals.Abort(ctx, g.ID); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, eng, g.ID, goal.StatusAborted)
	got = waitShown(t, d, 3)
	if got[2].Summary != "Goal aborted" || got[2].Body != "Say hi in the terminal" {
		t.Fatalf("for the aborted goal dunst shows %+v", got[2])
	}

	// While the person looks at the window, it shows the goal itself: no notification.
	focused.Store(true)
	g, err = eng.Goals.Start(ctx, spec("Finish quietly", tools.WriteLocal))
	if err != nil {
		t.Fatal(err)
	}
	waitStatus(t, eng, g.ID, goal.StatusCompleted)
	time.Sleep(300 * time.Millisecond)
	waitShown(t, d, 3)
}

func waitStatus(t *testing.T, eng *engine.Engine, id string, want goal.Status) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		g, err := eng.Goals.Get(context.Background(), id)
		if err == nil && g.Status == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("goal %s is %s (%v), want %s", id, g.Status, err, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

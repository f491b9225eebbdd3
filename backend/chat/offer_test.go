package chat_test

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/engine"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
	"github.com/clusterspace/clusterspace/backend/panes"
	"github.com/clusterspace/clusterspace/backend/tools"
)

// terminalsOnly is a workspace of one terminal pane.
type terminalsOnly struct{}

func (terminalsOnly) List(ctx context.Context, c panes.Caller, cursor string, limit int) (panes.Page, error) {
	return panes.Page{Items: []panes.Item{{PaneID: "t1", Kind: "terminal"}}}, nil
}

// A chat is offered tools by need too (agent/offer.go): the core without the goal tools, what
// find_tools found added at the end, and after a restart the same list from the stored
// conversation.
func TestAChatIsOfferedToolsByNeed(t *testing.T) {
	t.Parallel()
	eng, err := engine.Open(context.Background(), t.TempDir(), engine.WithLogger(slog.New(slog.DiscardHandler)), engine.WithConfigDir(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	eng.Registry.SetPanes(terminalsOnly{})
	r := newRigWith(t, llmtest.Script{Replies: []llmtest.Reply{
		call(tools.ToolFindTools, map[string]string{"query": "save the page as PDF"}),
		llmtest.Text("I can: browser_save_pdf."),
		llmtest.Text("You are welcome."),
	}}, func(r *rig) { r.reg = eng.Registry })
	r.send("Can you save a page as PDF?")
	r.stopped(1)
	r.svc.Shutdown() // a new process, which remakes the agent from the stored conversation
	r.start()
	r.send("Thanks")
	r.stopped(2)

	reqs := r.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	first := reqs[0].Tools
	t.Logf("the chat's first offer: %d tools %v", len(first), first)
	for _, n := range first {
		if tools.IsGoalTool(n) || strings.HasPrefix(n, "browser_") {
			t.Errorf("the chat is offered %s", n)
		}
	}
	if !slices.Contains(first, tools.ToolFindTools) || !slices.Contains(first, "write_to_terminal") || len(first) > 13 {
		t.Errorf("first offer (%d tools): %v", len(first), first)
	}
	second := reqs[1].Tools
	if len(second) <= len(first) || !slices.Equal(second[:len(first)], first) || !slices.Contains(second, "browser_save_pdf") {
		t.Errorf("after find_tools: %v", second)
	}
	if !slices.Equal(reqs[2].Tools, second) {
		t.Errorf("after a restart: %v, before %v", reqs[2].Tools, second)
	}
}

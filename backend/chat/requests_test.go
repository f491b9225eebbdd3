package chat_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/chat"
	"github.com/clusterspace/clusterspace/backend/engine"
	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
	"github.com/clusterspace/clusterspace/backend/panes"
	"github.com/clusterspace/clusterspace/backend/tools"
)

// A chat in actor–critic mode, with tool turns, on each wire format: every actor request
// repeats the previous actor request byte for byte except its newest message, and so does
// every critic request the previous critic request; each side carries its own cache key
// (OpenAI-compatible) or cache_control breakpoints (Anthropic).
func TestChatRequestsAreCacheFriendly(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{llm.KindOpenAI, llm.KindAnthropic} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			read := llmtest.Calls(llmtest.Call("read_file", map[string]string{"path": "notes.txt"}))
			r := newRigWith(t, llmtest.Script{Replies: []llmtest.Reply{
				read, llmtest.Text("The notes say: buy tea."),
				llmtest.Text("Also say where the notes are."),
				read, llmtest.Text("notes.txt in the chat's folder says: buy tea."),
				llmtest.Text("Say it in one line."),
				llmtest.Text("notes.txt: buy tea."),
				llmtest.Text(chat.DoneCommand),
			}}, func(r *rig) {
				m := r.modelOf(kind, "scripted")
				r.mods.set("", m)
				r.mods.set("critic", m)
			})
			os.WriteFile(filepath.Join(r.dir, "notes.txt"), []byte("buy tea"), 0o644)
			r.send(chat.CriticCommand)
			r.send("What do my notes say?")
			r.wantStop(1, chat.ReasonDone)
			var actor, critic []llmtest.Request
			for _, q := range r.srv.ChatRequests() {
				if strings.Contains(q.System, criticMark) {
					critic = append(critic, q)
				} else {
					actor = append(actor, q)
				}
			}
			if len(actor) != 5 || len(critic) != 3 {
				t.Fatalf("%d actor and %d critic requests, want 5 and 3", len(actor), len(critic))
			}
			for side, reqs := range map[string][]llmtest.Request{"chat:" + r.conv: actor, "chat:" + r.conv + "/critic": critic} {
				for i, q := range reqs {
					if kind == llm.KindOpenAI && q.CacheKey != side {
						t.Fatalf("%s request %d carries prompt_cache_key %q", side, i, q.CacheKey)
					}
					if kind == llm.KindAnthropic && (q.Breakpoints() < 2 || q.Breakpoints() > 4) {
						t.Fatalf("%s request %d carries %d breakpoints", side, i, q.Breakpoints())
					}
					if i > 0 {
						if segs, _ := llmtest.CommonPrefix(reqs[i-1], q); segs < reqs[i-1].Segments()-1 {
							t.Fatalf("%s request %d repeats %d of the previous request's %d segments", side, i, segs, reqs[i-1].Segments())
						}
					}
				}
			}
		})
	}
}

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

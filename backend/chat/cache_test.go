package chat_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/chat"
	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
	"github.com/clusterspace/clusterspace/backend/llm/providers"
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
				m := r.model("scripted")
				if kind == llm.KindAnthropic {
					prov, err := providers.New(llm.Config{Name: "scripted", Kind: kind, BaseURL: r.srv.URL, Model: "scripted", APIKey: "k", MaxRetries: -1})
					if err != nil {
						t.Fatal(err)
					}
					m = agent.Model{Provider: prov, Name: "scripted", ModelID: "scripted"}
				}
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

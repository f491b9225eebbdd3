package chat_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/agent/agenttest"
	"github.com/clusterspace/clusterspace/backend/chat"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

// A chat's events — a tool run, an approval, an actor–critic round to /done — are the same
// event for event as before the chat ran on the shared turn engine (streamed deltas aside:
// a subscriber may miss some of those by design). The golden file was written by the chat
// loop before the move.
func TestChatEventsGolden(t *testing.T) {
	t.Parallel()
	r := newRig(t, llmtest.Script{Replies: []llmtest.Reply{
		call("read_file", map[string]string{"path": "notes.txt"}),
		call("http_post", map[string]string{"url": "https://example.com/hook"}),
		llmtest.Text("Read and posted."),
		llmtest.Text("A long answer that goes on and on."),
		llmtest.Text("Shorter, please."),
		llmtest.Text("Short."),
		llmtest.Text("/done"),
	}})
	if err := os.WriteFile(filepath.Join(r.dir, "notes.txt"), []byte("hello from the notes"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.send("Read notes.txt and post it")
	r.answer(1, agent.ApprovalAllowScope)
	r.wantStop(1, chat.ReasonDone)
	r.send(chat.CriticCommand)
	r.send("Say it in one line")
	r.wantStop(2, chat.ReasonDone)
	var events []any
	for _, e := range r.events.all() {
		if e.Type != chat.EventMessageDelta {
			events = append(events, e)
		}
	}
	// Ids and clocks change from run to run (a zero duration is left out of an event anyway).
	got := agenttest.Lines(t, events, "id", "conversationId", "callId", "createdAt", "updatedAt", "answeredAt", "durationMs", "seq", "at", "turn")
	agenttest.Golden(t, filepath.Join("testdata", "chat-events.golden"), got)
}

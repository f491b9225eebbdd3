package chat_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/chat"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// volatile keys change from run to run (ids, clocks); the golden file leaves them out (a
// zero duration is left out of the event anyway).
var volatile = map[string]bool{"id": true, "goalId": true, "callId": true, "createdAt": true, "answeredAt": true,
	"durationMs": true, "seq": true, "at": true, "turn": true}

func blank(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if volatile[k] {
				delete(x, k)
			} else {
				x[k] = blank(val)
			}
		}
	case []any:
		for i := range x {
			x[i] = blank(x[i])
		}
	}
	return v
}

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
	if reason := r.stopped(1); reason != chat.ReasonDone {
		t.Fatalf("stopped with %s", reason)
	}
	r.send(chat.CriticCommand)
	r.send("Say it in one line")
	if reason := r.stopped(2); reason != chat.ReasonDone {
		t.Fatalf("stopped with %s", reason)
	}
	var out bytes.Buffer
	for _, e := range r.events.all() {
		if e.Type == chat.EventMessageDelta {
			continue
		}
		b, _ := json.Marshal(e)
		var v any
		json.Unmarshal(b, &v)
		b, _ = json.Marshal(blank(v))
		out.Write(b)
		out.WriteByte('\n')
	}
	path := filepath.Join("testdata", "chat-events.golden")
	if *update {
		os.WriteFile(path, out.Bytes(), 0o644)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if !bytes.Equal(out.Bytes(), want) {
		t.Fatalf("events differ from %s (run with -update if the change is meant):\n--- got\n%s\n--- want\n%s", path, out.Bytes(), want)
	}
}

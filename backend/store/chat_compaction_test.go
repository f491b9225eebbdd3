package store

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/chat"
	"github.com/clusterspace/clusterspace/backend/llm"
)

// A conversation's compactions come back exactly as stored, one per side, the newest of each
// side replacing the last, even after the store is opened again; clearing the conversation
// drops them with its messages (and only its own), and deleting it drops them too.
func TestChatCompactionsPerSideGoWithTheMessages(t *testing.T) {
	t.Parallel()
	s, path := openTemp(t)
	ctx := context.Background()
	saveTestWorkspace(t, s, "ws-a")
	saveTestConversation(t, s, "ws-a", "chat-1")
	saveTestConversation(t, s, "ws-a", "chat-2")
	// A summary as large as the agent writes, with what JSON must carry through unchanged.
	summary := "[Earlier in this session …]\n" + strings.Repeat("ü \"quoted\" <tag> \\ line\n", 400)
	actor := agent.Compaction{Head: 1, Through: 7, Summary: summary, StubThrough: 9, Count: 2, TokensBefore: 1900, TokensAfter: 700}
	critic := agent.Compaction{Head: 1, Through: 3, Summary: "critic's summary", Count: 1}
	for _, c := range []struct {
		id  string
		src chat.Source
		c   agent.Compaction
	}{{"chat-1", chat.SourceActor, agent.Compaction{Head: 1, Through: 2, Summary: "older", Count: 1}},
		{"chat-1", chat.SourceActor, actor}, {"chat-1", chat.SourceCritic, critic}, {"chat-2", chat.SourceActor, critic}} {
		if err := s.SaveChatCompaction(ctx, c.id, c.src, c.c); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	want := map[chat.Source]agent.Compaction{chat.SourceActor: actor, chat.SourceCritic: critic}
	if got, err := s.ChatCompactions(ctx, "chat-1"); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("stored compactions differ:\n got %+v (%v)\nwant %+v", got, err, want)
	}

	if err := s.AppendChatMessages(ctx, "chat-1", []chat.Message{{Source: chat.SourceUser, Message: llm.UserText("hi")}}); err != nil {
		t.Fatal(err)
	}
	if err := s.ClearChat(ctx, "chat-1"); err != nil {
		t.Fatal(err)
	}
	if got, err := s.ChatCompactions(ctx, "chat-1"); err != nil || len(got) != 0 {
		t.Fatalf("compactions after clear: %+v (%v)", got, err)
	}
	if got, err := s.ChatCompactions(ctx, "chat-2"); err != nil || len(got) != 1 {
		t.Fatalf("clearing one conversation touched another's compactions: %+v (%v)", got, err)
	}

	if err := s.DeleteChatConversation(ctx, "chat-2"); err != nil {
		t.Fatal(err)
	}
	var left int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM chat_compactions`).Scan(&left); err != nil || left != 0 {
		t.Fatalf("%d compactions left after delete (%v)", left, err)
	}
	if err := s.SaveChatCompaction(ctx, "chat-gone", chat.SourceActor, actor); !errors.Is(err, chat.ErrNotFound) {
		t.Fatalf("compaction of an unknown conversation: %v", err)
	}
}

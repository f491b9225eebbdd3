package store

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/chat"
	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/tools"
	"github.com/clusterspace/clusterspace/backend/workspace"
)

func saveTestWorkspace(t *testing.T, s *Store, id string) {
	t.Helper()
	now := time.Now().UTC()
	if err := s.SaveWorkspace(context.Background(), workspace.Workspace{ID: id, Name: id, Rows: 1, Cols: 1,
		RowWeights: []float64{1}, ColWeights: []float64{1}, CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
}

// saveTestConversation starts conversation id in workspace wsID with the default settings.
func saveTestConversation(t *testing.T, s *Store, wsID, id string) chat.Conversation {
	t.Helper()
	c := chat.Conversation{Config: chat.Config{ConversationID: id, WorkspaceID: wsID, Settings: chat.DefaultSettings()}}
	if err := s.CreateChatConversation(context.Background(), &c); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestChatMessagesAppendInOrderAndClearPerConversation(t *testing.T) {
	t.Parallel()
	s, path := openTemp(t)
	ctx := context.Background()
	saveTestWorkspace(t, s, "ws-a")
	saveTestConversation(t, s, "ws-a", "ws-a") // the messages' keys below are conversation ids
	saveTestConversation(t, s, "ws-a", "ws-b") // a second conversation of the same workspace
	first := []chat.Message{
		{Source: chat.SourceUser, Message: llm.UserText("Look at this", llm.Image{MediaType: "image/png", Data: []byte{0x89, 'P', 'N', 'G'}})},
		{Source: chat.SourceActor, Message: llm.AssistantMessage(llm.ReasoningPart("hmm", "sig"), llm.Text("A terminal."))},
	}
	if err := s.AppendChatMessages(ctx, "ws-a", first); err != nil {
		t.Fatal(err)
	}
	if first[0].Seq != 1 || first[1].Seq != 2 || first[0].CreatedAt.IsZero() || first[1].WorkspaceID != "ws-a" || first[1].ConversationID != "ws-a" {
		t.Fatalf("seq and time not set: %+v", first)
	}
	more := []chat.Message{{Source: chat.SourceCritic, Message: llm.AssistantText("The ans"), Partial: true}}
	if err := s.AppendChatMessages(ctx, "ws-a", more); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendChatMessages(ctx, "ws-b", []chat.Message{{Source: chat.SourceUser, Message: llm.UserText("other")}}); err != nil {
		t.Fatal(err)
	}
	if more[0].Seq != 3 {
		t.Fatalf("seq %d, want 3", more[0].Seq)
	}

	s.Close() // what a restart reads back
	s2, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	got, err := s2.ChatMessages(ctx, "ws-a")
	if err != nil {
		t.Fatal(err)
	}
	want := append(first, more...)
	for i := range want {
		want[i].CreatedAt = want[i].CreatedAt.Truncate(time.Millisecond)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("read back:\n got %+v\nwant %+v", got, want)
	}
	var role string
	s2.db.QueryRowContext(ctx, `SELECT role FROM chat_messages WHERE conversation_id = 'ws-a' AND seq = 2`).Scan(&role)
	if role != "assistant" {
		t.Errorf("role column %q", role)
	}

	if err := s2.ClearChat(ctx, "ws-a"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s2.ChatMessages(ctx, "ws-a"); len(got) != 0 {
		t.Fatalf("%d messages after clear", len(got))
	}
	if got, _ := s2.ChatMessages(ctx, "ws-b"); len(got) != 1 {
		t.Fatal("clearing one conversation touched another")
	}
	if err := s2.AppendChatMessages(ctx, "ws-a", []chat.Message{{Source: chat.SourceUser, Message: llm.UserText("again")}}); err != nil {
		t.Fatal(err)
	}
	if got, _ := s2.ChatMessages(ctx, "ws-a"); len(got) != 1 || got[0].Seq != 1 {
		t.Fatalf("after clear: %+v", got)
	}
}

func TestChatConfigDefaultsAndRoundTrip(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t)
	ctx := context.Background()
	saveTestWorkspace(t, s, "ws-a")
	saveTestConversation(t, s, "ws-a", "c1")
	c, err := s.ChatConfig(ctx, "c1")
	want := chat.Config{ConversationID: "c1", WorkspaceID: "ws-a", Settings: chat.DefaultSettings()}
	if err != nil || !reflect.DeepEqual(c, want) || c.Settings.AskAbove != tools.ReadOnly || c.Settings.IterationCap != 10 {
		t.Fatalf("defaults: %+v %v", c, err)
	}
	c.Title, c.CriticMode, c.CriticPrompt = "Release notes", true, "Cite sources."
	c.Settings = chat.Settings{Provider: "p1", Model: "big-model", Persona: "reviewer", Skills: []string{"deploy", "git"},
		CriticProvider: "p2", IterationCap: 3, AskAbove: tools.NetworkGet}
	if err := s.SaveChatConfig(ctx, c); err != nil {
		t.Fatal(err)
	}
	c.CriticPrompt = "Cite two sources."
	if err := s.SaveChatConfig(ctx, c); err != nil {
		t.Fatal(err)
	}
	got, err := s.ChatConfig(ctx, "c1")
	if err != nil || !reflect.DeepEqual(got, c) {
		t.Fatalf("round trip: %+v %v, want %+v", got, err, c)
	}
	list, err := s.ChatConversations(ctx, "ws-a")
	if err != nil || len(list) != 1 || !reflect.DeepEqual(list[0].Config, c) || list[0].CreatedAt.IsZero() {
		t.Fatalf("list: %+v %v", list, err)
	}
}

func TestChatConversationsListNewestFirstAndDelete(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t)
	ctx := context.Background()
	saveTestWorkspace(t, s, "ws-a")
	saveTestWorkspace(t, s, "ws-b")
	saveTestConversation(t, s, "ws-a", "old")
	saveTestConversation(t, s, "ws-a", "new")
	saveTestConversation(t, s, "ws-b", "other")
	// A message makes a conversation the most recent.
	later := []chat.Message{{Source: chat.SourceUser, Message: llm.UserText("hi"), CreatedAt: time.Now().Add(time.Hour)}}
	if err := s.AppendChatMessages(ctx, "old", later); err != nil {
		t.Fatal(err)
	}
	list, err := s.ChatConversations(ctx, "ws-a")
	if err != nil || len(list) != 2 || list[0].ConversationID != "old" || list[0].Messages != 1 || list[1].Messages != 0 {
		t.Fatalf("list: %+v %v", list, err)
	}
	if err := s.DeleteChatConversation(ctx, "old"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteChatConversation(ctx, "old"); !errors.Is(err, chat.ErrNotFound) {
		t.Fatalf("deleting twice: %v", err)
	}
	var n int
	s.db.QueryRowContext(ctx, `SELECT count(*) FROM chat_messages`).Scan(&n)
	if n != 0 {
		t.Fatalf("%d messages outlived their conversation", n)
	}
	if list, _ := s.ChatConversations(ctx, "ws-b"); len(list) != 1 {
		t.Fatalf("another workspace's list changed: %+v", list)
	}
}

func TestChatOfUnknownOrDeletedWorkspace(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t)
	ctx := context.Background()
	err := s.AppendChatMessages(ctx, "c-missing", []chat.Message{{Source: chat.SourceUser, Message: llm.UserText("hi")}})
	if !errors.Is(err, chat.ErrNotFound) {
		t.Fatalf("append to an unknown conversation: %v", err)
	}
	if err := s.SaveChatConfig(ctx, chat.Config{ConversationID: "c-missing", Settings: chat.DefaultSettings()}); !errors.Is(err, chat.ErrNotFound) {
		t.Fatalf("config of an unknown conversation: %v", err)
	}
	if _, err := s.ChatConfig(ctx, "c-missing"); !errors.Is(err, chat.ErrNotFound) {
		t.Fatalf("read the config of an unknown conversation: %v", err)
	}
	c := chat.Conversation{Config: chat.Config{ConversationID: "c1", WorkspaceID: "ws-missing", Settings: chat.DefaultSettings()}}
	if err := s.CreateChatConversation(ctx, &c); !errors.Is(err, chat.ErrNotFound) {
		t.Fatalf("a conversation in an unknown workspace: %v", err)
	}
	saveTestWorkspace(t, s, "ws-a")
	saveTestConversation(t, s, "ws-a", "c1")
	s.AppendChatMessages(ctx, "c1", []chat.Message{{Source: chat.SourceUser, Message: llm.UserText("hi")}})
	if err := s.DeleteWorkspace(ctx, "ws-a"); err != nil {
		t.Fatal(err)
	}
	var n int
	s.db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM chat_messages) + (SELECT count(*) FROM chat_conversations)`).Scan(&n)
	if n != 0 {
		t.Fatalf("%d chat rows outlived their workspace", n)
	}
}

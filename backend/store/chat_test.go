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

func TestChatMessagesAppendInOrderAndClearPerWorkspace(t *testing.T) {
	t.Parallel()
	s, path := openTemp(t)
	ctx := context.Background()
	saveTestWorkspace(t, s, "ws-a")
	saveTestWorkspace(t, s, "ws-b")
	first := []chat.Message{
		{Source: chat.SourceUser, Message: llm.UserText("Look at this", llm.Image{MediaType: "image/png", Data: []byte{0x89, 'P', 'N', 'G'}})},
		{Source: chat.SourceActor, Message: llm.AssistantMessage(llm.ReasoningPart("hmm", "sig"), llm.Text("A terminal."))},
	}
	if err := s.AppendChatMessages(ctx, "ws-a", first); err != nil {
		t.Fatal(err)
	}
	if first[0].Seq != 1 || first[1].Seq != 2 || first[0].CreatedAt.IsZero() || first[1].WorkspaceID != "ws-a" {
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
	s2.db.QueryRowContext(ctx, `SELECT role FROM chat_messages WHERE workspace_id = 'ws-a' AND seq = 2`).Scan(&role)
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
		t.Fatal("clearing one workspace touched another")
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
	c, err := s.ChatConfig(ctx, "ws-a")
	if err != nil || !reflect.DeepEqual(c, chat.DefaultConfig("ws-a")) || c.Settings.AskAbove != tools.WriteLocal || c.Settings.IterationCap != 10 {
		t.Fatalf("defaults: %+v %v", c, err)
	}
	c.CriticMode, c.CriticPrompt = true, "Cite sources."
	c.Settings = chat.Settings{Provider: "p1", CriticProvider: "p2", IterationCap: 3, AskAbove: tools.NetworkGet}
	if err := s.SaveChatConfig(ctx, c); err != nil {
		t.Fatal(err)
	}
	c.CriticPrompt = "Cite two sources."
	if err := s.SaveChatConfig(ctx, c); err != nil {
		t.Fatal(err)
	}
	got, err := s.ChatConfig(ctx, "ws-a")
	if err != nil || !reflect.DeepEqual(got, c) {
		t.Fatalf("round trip: %+v %v, want %+v", got, err, c)
	}
}

func TestChatOfUnknownOrDeletedWorkspace(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t)
	ctx := context.Background()
	err := s.AppendChatMessages(ctx, "ws-missing", []chat.Message{{Source: chat.SourceUser, Message: llm.UserText("hi")}})
	if !errors.Is(err, chat.ErrNotFound) {
		t.Fatalf("append to an unknown workspace: %v", err)
	}
	if err := s.SaveChatConfig(ctx, chat.DefaultConfig("ws-missing")); !errors.Is(err, chat.ErrNotFound) {
		t.Fatalf("config of an unknown workspace: %v", err)
	}
	saveTestWorkspace(t, s, "ws-a")
	s.AppendChatMessages(ctx, "ws-a", []chat.Message{{Source: chat.SourceUser, Message: llm.UserText("hi")}})
	s.SaveChatConfig(ctx, chat.Config{WorkspaceID: "ws-a", CriticMode: true, Settings: chat.Settings{IterationCap: 2}})
	if err := s.DeleteWorkspace(ctx, "ws-a"); err != nil {
		t.Fatal(err)
	}
	var n int
	s.db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM chat_messages) + (SELECT count(*) FROM chat_state)`).Scan(&n)
	if n != 0 {
		t.Fatalf("%d chat rows outlived their workspace", n)
	}
}

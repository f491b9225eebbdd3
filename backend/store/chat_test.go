package store

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/agent"
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

// openChats is a store with workspace ws-a holding the conversations named.
func openChats(t *testing.T, conversations ...string) (*Store, string) {
	t.Helper()
	s, path := openTemp(t)
	saveTestWorkspace(t, s, "ws-a")
	for _, id := range conversations {
		saveTestConversation(t, s, "ws-a", id)
	}
	return s, path
}

func TestChatMessagesAppendInOrderAndClearPerConversation(t *testing.T) {
	t.Parallel()
	// The messages' keys below are conversation ids; ws-b is a second conversation of ws-a.
	s, path := openChats(t, "ws-a", "ws-b")
	ctx := context.Background()
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
	s, _ := openChats(t, "c1")
	ctx := context.Background()
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

// A conversation's compactions come back exactly as stored, one per side, the newest of each
// side replacing the last, even after the store is opened again; clearing the conversation
// drops them with its messages (and only its own), and deleting it drops them too.
func TestChatCompactionsPerSideGoWithTheMessages(t *testing.T) {
	t.Parallel()
	s, path := openChats(t, "chat-1", "chat-2")
	ctx := context.Background()
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

// conversationsMigration is the migration that gave workspaces several chat conversations.
const conversationsMigration = 13

// A database made by the schema before several conversations per workspace — one chat per
// workspace, its settings in chat_state — opens with each workspace's chat as its first
// conversation: every message, in order, and every setting kept. A workspace that never
// chatted gets none; the other migrations' tables are untouched.
func TestChatMigratesOneConversationPerWorkspaceIntoTheFirstOfSeveral(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), FileName)
	db, err := sql.Open("sqlite3", "file:"+path+"?_foreign_keys=on")
	if err != nil {
		t.Fatal(err)
	}
	ms, err := loadMigrations()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms[:conversationsMigration-1] {
		if _, err := db.Exec(m.sql); err != nil {
			t.Fatalf("old schema, %s: %v", m.name, err)
		}
	}
	old := []string{
		`PRAGMA user_version = ` + strconv.Itoa(conversationsMigration-1),
		`INSERT INTO workspaces(id, name, position, grid_rows, grid_cols, row_weights, col_weights, created_at, updated_at)
			VALUES ('ws-a', 'A', 0, 1, 1, '[1]', '[1]', 1000, 1000), ('ws-b', 'B', 1, 1, 1, '[1]', '[1]', 2000, 2000),
			       ('ws-c', 'C', 2, 1, 1, '[1]', '[1]', 3000, 3000)`,
		`INSERT INTO chat_messages(workspace_id, seq, role, source, message, partial, created_at) VALUES
			('ws-a', 1, 'user', 'user', '{"role":"user","parts":[{"kind":"text","text":"What is in the log?"}]}', 0, 5000),
			('ws-a', 2, 'assistant', 'actor', '{"role":"assistant","parts":[{"kind":"text","text":"Two errors."}]}', 0, 6000),
			('ws-a', 3, 'assistant', 'critic', '{"role":"assistant","parts":[{"kind":"text","text":"Name th"}]}', 1, 7000)`,
		`INSERT INTO chat_state(workspace_id, critic_mode, critic_prompt, provider, critic_provider, iteration_cap, ask_above)
			VALUES ('ws-a', 1, 'Quote the lines.', 'p1', 'p2', 4, 'network_get'), ('ws-b', 0, '', 'p3', '', 10, 'read_only')`,
	}
	for _, q := range old {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("old rows: %v\n%s", err, q)
		}
	}
	db.Close()

	s, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("migrate: %v", err)
	}
	defer s.Close()

	list, err := s.ChatConversations(ctx, "ws-a")
	if err != nil || len(list) != 1 {
		t.Fatalf("ws-a conversations: %+v %v", list, err)
	}
	a := list[0]
	wantA := chat.Config{ConversationID: "chat-ws-a", WorkspaceID: "ws-a", Title: "Chat", CriticMode: true, CriticPrompt: "Quote the lines.",
		Settings: chat.Settings{Provider: "p1", CriticProvider: "p2", IterationCap: 4, AskAbove: tools.NetworkGet, Skills: []string{}}}
	if !reflect.DeepEqual(a.Config, wantA) || a.Messages != 3 || a.CreatedAt.UnixMilli() != 5000 || a.UpdatedAt.UnixMilli() != 7000 {
		t.Fatalf("ws-a's conversation:\n got %+v\nwant %+v (3 messages, 5000–7000)", a, wantA)
	}
	msgs, err := s.ChatMessages(ctx, a.ConversationID)
	if err != nil || len(msgs) != 3 {
		t.Fatalf("messages: %+v %v", msgs, err)
	}
	texts := []string{msgs[0].Message.Text(), msgs[1].Message.Text(), msgs[2].Message.Text()}
	if !reflect.DeepEqual(texts, []string{"What is in the log?", "Two errors.", "Name th"}) || !msgs[2].Partial ||
		msgs[2].Source != chat.SourceCritic || msgs[0].WorkspaceID != "ws-a" || msgs[1].CreatedAt.UnixMilli() != 6000 {
		t.Fatalf("messages after the move: %+v", msgs)
	}

	// Settings without messages still make a conversation, with the workspace's clock.
	b, err := s.ChatConfig(ctx, "chat-ws-b")
	if err != nil || b.Settings.Provider != "p3" || b.Settings.AskAbove != tools.ReadOnly {
		t.Fatalf("ws-b: %+v %v", b, err)
	}
	if list, _ := s.ChatConversations(ctx, "ws-c"); len(list) != 0 {
		t.Fatalf("a workspace that never chatted got %+v", list)
	}
	// The moved conversation goes on where it stopped.
	more := []chat.Message{{Source: chat.SourceUser, Message: llm.UserText("Which two?")}}
	if err := s.AppendChatMessages(ctx, a.ConversationID, more); err != nil || more[0].Seq != 4 {
		t.Fatalf("append after the move: seq %d, %v", more[0].Seq, err)
	}
	for _, gone := range []string{"chat_state", "chat_messages_v13"} {
		var n int
		s.db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE name = ?", gone).Scan(&n)
		if n != 0 {
			t.Errorf("table %s is still there", gone)
		}
	}
}

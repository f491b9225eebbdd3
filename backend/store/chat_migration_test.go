package store

import (
	"context"
	"database/sql"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"github.com/clusterspace/clusterspace/backend/chat"
	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/tools"
)

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

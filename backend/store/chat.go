package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mattn/go-sqlite3"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/chat"
	"github.com/clusterspace/clusterspace/backend/tools"
)

// noWorkspace turns a foreign-key failure into an error that names the missing workspace.
func noWorkspace(wsID string, err error) error {
	var se sqlite3.Error
	if errors.As(err, &se) && se.ExtendedCode == sqlite3.ErrConstraintForeignKey {
		return fmt.Errorf("workspace %q does not exist (deleted, or never created): %w", wsID, chat.ErrNotFound)
	}
	return err
}

// noConversation is the error of a conversation id that names none.
func noConversation(id string) error {
	return fmt.Errorf("chat conversation %q does not exist (deleted, or never started): %w", id, chat.ErrNotFound)
}

// ChatConversations lists a workspace's conversations, the most recently updated first.
func (s *Store) ChatConversations(ctx context.Context, wsID string) ([]chat.Conversation, error) {
	return queryAll(ctx, s.db, func(r scanner) (chat.Conversation, error) {
		var c chat.Conversation
		var t stamps
		err := scanConversation(r, &c.Config, &t.created, &t.updated, &c.Messages)
		c.CreatedAt, c.UpdatedAt = t.times()
		return c, err
	}, `SELECT `+conversationColumns+`,
			(SELECT COUNT(*) FROM chat_messages m WHERE m.conversation_id = c.id)
		FROM chat_conversations c WHERE c.workspace_id = ? ORDER BY c.updated_at DESC, c.created_at DESC, c.id`, wsID)
}

// The columns of a conversation's config, in the order scanConversation reads them.
const conversationColumns = `c.id, c.workspace_id, c.title, c.persona, c.skills, c.provider, c.model, c.critic_mode,
	c.critic_prompt, c.critic_provider, c.iteration_cap, c.ask_above, c.created_at, c.updated_at`

// scanConversation reads a row of conversationColumns into c, then the row's further
// columns into more, and decodes the columns stored as text.
func scanConversation(r scanner, c *chat.Config, more ...any) error {
	var skills, askAbove string
	dest := []any{&c.ConversationID, &c.WorkspaceID, &c.Title, &c.Settings.Persona, &skills, &c.Settings.Provider, &c.Settings.Model,
		&c.CriticMode, &c.CriticPrompt, &c.Settings.CriticProvider, &c.Settings.IterationCap, &askAbove}
	if err := r.Scan(append(dest, more...)...); err != nil {
		return err
	}
	if err := json.Unmarshal([]byte(skills), &c.Settings.Skills); err != nil {
		return fmt.Errorf("chat conversation %s: its stored skills are damaged: %w", c.ConversationID, err)
	}
	if c.Settings.Skills == nil {
		c.Settings.Skills = []string{}
	}
	var err error
	if c.Settings.AskAbove, err = tools.ParseRisk(askAbove); err != nil {
		return fmt.Errorf("chat conversation %s: %w", c.ConversationID, err)
	}
	return nil
}

// CreateChatConversation stores a new conversation, setting its CreatedAt and UpdatedAt.
func (s *Store) CreateChatConversation(ctx context.Context, c *chat.Conversation) error {
	now := time.Now().UTC()
	skills, err := json.Marshal(nonNil(c.Settings.Skills))
	if err != nil {
		return err
	}
	_, err = s.db.ExecContext(ctx, `INSERT INTO chat_conversations(id, workspace_id, title, persona, skills, provider, model,
			critic_mode, critic_prompt, critic_provider, iteration_cap, ask_above, created_at, updated_at)
		VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.ConversationID, c.WorkspaceID, c.Title, c.Settings.Persona, string(skills), c.Settings.Provider, c.Settings.Model,
		c.CriticMode, c.CriticPrompt, c.Settings.CriticProvider, c.Settings.IterationCap, c.Settings.AskAbove.String(), ms(now), ms(now))
	if err != nil {
		return fmt.Errorf("start a chat in workspace %s: %w", c.WorkspaceID, noWorkspace(c.WorkspaceID, err))
	}
	c.CreatedAt, c.UpdatedAt = now, now
	return nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// DeleteChatConversation deletes a conversation and its messages.
func (s *Store) DeleteChatConversation(ctx context.Context, id string) error {
	return s.deleteOne(ctx, noConversation(id), `DELETE FROM chat_conversations WHERE id = ?`, id)
}

// ChatMessages returns a conversation's messages in order.
func (s *Store) ChatMessages(ctx context.Context, id string) ([]chat.Message, error) {
	return queryAll(ctx, s.db, func(r scanner) (chat.Message, error) {
		m := chat.Message{ConversationID: id}
		var raw string
		var created int64
		if err := r.Scan(&m.WorkspaceID, &m.Seq, &m.Source, &raw, &m.Partial, &created); err != nil {
			return m, err
		}
		if err := json.Unmarshal([]byte(raw), &m.Message); err != nil {
			return m, fmt.Errorf("chat conversation %s: stored message %d is damaged: %w", id, m.Seq, err)
		}
		m.CreatedAt = at(created)
		return m, nil
	}, `SELECT c.workspace_id, m.seq, m.source, m.message, m.partial, m.created_at
		FROM chat_messages m JOIN chat_conversations c ON c.id = m.conversation_id
		WHERE m.conversation_id = ? ORDER BY m.seq`, id)
}

// AppendChatMessages stores msgs after the conversation's last message, in one transaction,
// setting their Seq (and CreatedAt, if zero); the conversation counts as updated.
func (s *Store) AppendChatMessages(ctx context.Context, id string, msgs []chat.Message) error {
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var wsID string
		if err := tx.QueryRowContext(ctx, `SELECT workspace_id FROM chat_conversations WHERE id = ?`, id).Scan(&wsID); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return noConversation(id)
			}
			return err
		}
		var next int64
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) + 1 FROM chat_messages WHERE conversation_id = ?`, id).Scan(&next); err != nil {
			return err
		}
		last := time.Time{}
		for i := range msgs {
			m := &msgs[i]
			b, err := json.Marshal(m.Message)
			if err != nil {
				return err
			}
			if m.CreatedAt.IsZero() {
				m.CreatedAt = time.Now().UTC()
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO chat_messages(conversation_id, seq, role, source, message, partial, created_at)
				VALUES(?, ?, ?, ?, ?, ?, ?)`, id, next, string(m.Message.Role), string(m.Source), string(b), m.Partial, ms(m.CreatedAt)); err != nil {
				return err
			}
			m.ConversationID, m.WorkspaceID, m.Seq = id, wsID, next
			last = m.CreatedAt
			next++
		}
		if last.IsZero() {
			return nil
		}
		_, err := tx.ExecContext(ctx, `UPDATE chat_conversations SET updated_at = MAX(updated_at, ?) WHERE id = ?`, ms(last), id)
		return err
	})
	if err != nil {
		return fmt.Errorf("save chat conversation %s: %w", id, err)
	}
	return nil
}

// ClearChat deletes a conversation's messages and, in the same transaction, its compactions,
// which summarise those messages and would shape the next conversation wrongly; its config stays.
func (s *Store) ClearChat(ctx context.Context, id string) error {
	return s.deleteAllOf(ctx, id, `DELETE FROM chat_messages WHERE conversation_id = ?`, `DELETE FROM chat_compactions WHERE conversation_id = ?`)
}

// ChatCompactions returns a conversation's stored compactions by side (none: an empty map).
func (s *Store) ChatCompactions(ctx context.Context, id string) (map[chat.Source]agent.Compaction, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT source, compaction FROM chat_compactions WHERE conversation_id = ?`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[chat.Source]agent.Compaction{}
	for rows.Next() {
		var src chat.Source
		var raw string
		if err := rows.Scan(&src, &raw); err != nil {
			return nil, err
		}
		var c agent.Compaction
		if err := json.Unmarshal([]byte(raw), &c); err != nil {
			return nil, fmt.Errorf("chat conversation %s: the stored compaction of the %s is damaged: %w", id, src, err)
		}
		out[src] = c
	}
	return out, rows.Err()
}

// SaveChatCompaction stores (or replaces) the compaction of one side of a conversation.
func (s *Store) SaveChatCompaction(ctx context.Context, id string, src chat.Source, c agent.Compaction) error {
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	_, err = s.db.ExecContext(ctx, `INSERT INTO chat_compactions(conversation_id, source, compaction, updated_at) VALUES(?, ?, ?, ?)
		ON CONFLICT(conversation_id, source) DO UPDATE SET compaction = excluded.compaction, updated_at = excluded.updated_at`,
		id, string(src), string(b), ms(time.Now().UTC()))
	var se sqlite3.Error
	if errors.As(err, &se) && se.ExtendedCode == sqlite3.ErrConstraintForeignKey {
		return noConversation(id)
	}
	if err != nil {
		return fmt.Errorf("save the compaction of chat conversation %s: %w", id, err)
	}
	return nil
}

// ChatConfig returns a conversation's config.
func (s *Store) ChatConfig(ctx context.Context, id string) (chat.Config, error) {
	var c chat.Config
	var t stamps
	err := scanConversation(s.db.QueryRowContext(ctx, `SELECT `+conversationColumns+` FROM chat_conversations c WHERE c.id = ?`, id),
		&c, &t.created, &t.updated)
	if errors.Is(err, sql.ErrNoRows) {
		return c, noConversation(id)
	}
	return c, err
}

// SaveChatConfig replaces a stored conversation's title and settings.
func (s *Store) SaveChatConfig(ctx context.Context, c chat.Config) error {
	skills, err := json.Marshal(nonNil(c.Settings.Skills))
	if err != nil {
		return err
	}
	res, err := s.db.ExecContext(ctx, `UPDATE chat_conversations SET title = ?, persona = ?, skills = ?, provider = ?, model = ?,
			critic_mode = ?, critic_prompt = ?, critic_provider = ?, iteration_cap = ?, ask_above = ?
		WHERE id = ?`,
		c.Title, c.Settings.Persona, string(skills), c.Settings.Provider, c.Settings.Model, c.CriticMode, c.CriticPrompt,
		c.Settings.CriticProvider, c.Settings.IterationCap, c.Settings.AskAbove.String(), c.ConversationID)
	if err != nil {
		return fmt.Errorf("save the settings of chat conversation %s: %w", c.ConversationID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return noConversation(c.ConversationID)
	}
	return nil
}

var (
	_ chat.Repo           = (*Store)(nil)
	_ chat.CompactionRepo = (*Store)(nil)
)

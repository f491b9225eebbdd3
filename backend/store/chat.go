package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mattn/go-sqlite3"

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

// ChatMessages returns a workspace's conversation in order.
func (s *Store) ChatMessages(ctx context.Context, wsID string) ([]chat.Message, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT seq, source, message, partial, created_at FROM chat_messages
		WHERE workspace_id = ? ORDER BY seq`, wsID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []chat.Message
	for rows.Next() {
		m := chat.Message{WorkspaceID: wsID}
		var raw string
		var created int64
		if err := rows.Scan(&m.Seq, &m.Source, &raw, &m.Partial, &created); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(raw), &m.Message); err != nil {
			return nil, fmt.Errorf("chat of workspace %s: stored message %d is damaged: %w", wsID, m.Seq, err)
		}
		m.CreatedAt = time.UnixMilli(created).UTC()
		out = append(out, m)
	}
	return out, rows.Err()
}

// AppendChatMessages stores msgs after the workspace's last message, in one transaction,
// setting their Seq (and CreatedAt, if zero).
func (s *Store) AppendChatMessages(ctx context.Context, wsID string, msgs []chat.Message) error {
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var next int64
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) + 1 FROM chat_messages WHERE workspace_id = ?`, wsID).Scan(&next); err != nil {
			return err
		}
		for i := range msgs {
			m := &msgs[i]
			b, err := json.Marshal(m.Message)
			if err != nil {
				return err
			}
			if m.CreatedAt.IsZero() {
				m.CreatedAt = time.Now().UTC()
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO chat_messages(workspace_id, seq, role, source, message, partial, created_at)
				VALUES(?, ?, ?, ?, ?, ?, ?)`, wsID, next, string(m.Message.Role), string(m.Source), string(b), m.Partial, ms(m.CreatedAt)); err != nil {
				return err
			}
			m.WorkspaceID, m.Seq = wsID, next
			next++
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("save the chat of workspace %s: %w", wsID, noWorkspace(wsID, err))
	}
	return nil
}

// ClearChat deletes a workspace's conversation; its chat config stays.
func (s *Store) ClearChat(ctx context.Context, wsID string) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM chat_messages WHERE workspace_id = ?`, wsID)
	return err
}

// ChatConfig returns a workspace's chat config, or chat.DefaultConfig if none was saved.
func (s *Store) ChatConfig(ctx context.Context, wsID string) (chat.Config, error) {
	c := chat.DefaultConfig(wsID)
	var askAbove string
	err := s.db.QueryRowContext(ctx, `SELECT critic_mode, critic_prompt, provider, critic_provider, iteration_cap, ask_above
		FROM chat_state WHERE workspace_id = ?`, wsID).Scan(&c.CriticMode, &c.CriticPrompt, &c.Settings.Provider,
		&c.Settings.CriticProvider, &c.Settings.IterationCap, &askAbove)
	if errors.Is(err, sql.ErrNoRows) {
		return c, nil
	}
	if err != nil {
		return c, err
	}
	if c.Settings.AskAbove, err = tools.ParseRisk(askAbove); err != nil {
		return c, fmt.Errorf("chat settings of workspace %s: %w", wsID, err)
	}
	return c, nil
}

// SaveChatConfig inserts or replaces a workspace's chat config.
func (s *Store) SaveChatConfig(ctx context.Context, c chat.Config) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO chat_state(workspace_id, critic_mode, critic_prompt, provider, critic_provider, iteration_cap, ask_above)
		VALUES(?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT(workspace_id) DO UPDATE SET critic_mode = excluded.critic_mode, critic_prompt = excluded.critic_prompt,
			provider = excluded.provider, critic_provider = excluded.critic_provider, iteration_cap = excluded.iteration_cap,
			ask_above = excluded.ask_above`,
		c.WorkspaceID, c.CriticMode, c.CriticPrompt, c.Settings.Provider, c.Settings.CriticProvider, c.Settings.IterationCap,
		c.Settings.AskAbove.String())
	if err != nil {
		return fmt.Errorf("save the chat settings of workspace %s: %w", c.WorkspaceID, noWorkspace(c.WorkspaceID, err))
	}
	return nil
}

var _ chat.Repo = (*Store)(nil)

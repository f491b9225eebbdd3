package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/llm"
)

// Step caps: a goal keeps its first stepsKeepFirst steps (how it began) and its last
// stepsKeepLast (where it is), so a runaway goal cannot fill the disk.
const (
	stepsKeepFirst = 50
	stepsKeepLast  = 450
)

func ms(t time.Time) int64 { return t.UnixMilli() }

func msPtr(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UnixMilli()
}

func fromMS(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := at(v.Int64)
	return &t
}

// The queries of a goal's commit, which runs several times a step: each is prepared once
// for the store's life (see committer).
const (
	qSaveGoal = `INSERT INTO goals(id, spec, status, report, state, created_at, updated_at, started_at, ended_at)
		VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT(id) DO UPDATE SET spec = excluded.spec, status = excluded.status, report = excluded.report, state = excluded.state,
			updated_at = excluded.updated_at, started_at = excluded.started_at, ended_at = excluded.ended_at`
	qSaveMessage      = `INSERT OR REPLACE INTO goal_messages(goal_id, seq, message) VALUES(?, ?, ?)`
	qTruncateMessages = `DELETE FROM goal_messages WHERE goal_id = ? AND seq >= ?`
	qSaveStep         = `INSERT OR REPLACE INTO goal_steps(goal_id, idx, call_id, tool, args, result, is_error, started_at, duration_ms, images, usage)
		VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	qSaveStepImage  = `INSERT OR REPLACE INTO goal_step_images(goal_id, idx, n, media_type, data) VALUES(?, ?, ?, ?, ?)`
	qPruneSteps     = `DELETE FROM goal_steps WHERE goal_id = ? AND idx > ? AND idx <= ?`
	qPruneStepImage = `DELETE FROM goal_step_images WHERE goal_id = ? AND idx > ? AND idx <= ?`
	qNextEventSeq   = `SELECT COALESCE(MAX(seq), 0) + 1 FROM goal_events WHERE goal_id = ?`
	qSaveEvent      = `INSERT INTO goal_events(goal_id, seq, type, data, at) VALUES(?, ?, ?, ?, ?)`
)

// CommitGoal writes, in one transaction, whatever a runner step produced: the goal row, new
// conversation messages (numbered from c.MessagesFrom), steps and events. Events get their
// sequence numbers here (written back into c.Events), so every writer numbers them alike.
func (s *Store) CommitGoal(ctx context.Context, c *goal.Commit) error {
	return s.inCommit(ctx, func(tx commitTx) error {
		if c.Goal != nil {
			if err := saveGoal(tx, *c.Goal); err != nil {
				return err
			}
		}
		goalID := c.GoalID()
		for i, m := range c.Messages {
			b, err := json.Marshal(m)
			if err != nil {
				return err
			}
			if err := tx.exec(qSaveMessage, goalID, c.MessagesFrom+i, string(b)); err != nil {
				return fmt.Errorf("save message %d of goal %s: %w", c.MessagesFrom+i, goalID, err)
			}
		}
		if c.TruncateMessagesFrom != nil {
			if err := tx.exec(qTruncateMessages, goalID, *c.TruncateMessagesFrom); err != nil {
				return err
			}
		}
		for _, st := range c.Steps {
			usage, err := optionalJSON(st.Usage)
			if err != nil {
				return err
			}
			if err := tx.exec(qSaveStep, goalID, st.Index, st.CallID, st.Tool, string(orEmptyObject(st.Args)), st.Result, st.IsError,
				ms(st.StartedAt), st.DurationMS, st.Images, usage); err != nil {
				return fmt.Errorf("save step %d of goal %s: %w", st.Index, goalID, err)
			}
			for n, img := range st.Pictures {
				if err := tx.exec(qSaveStepImage, goalID, st.Index, n, img.MediaType, img.Data); err != nil {
					return fmt.Errorf("save picture %d of step %d of goal %s: %w", n, st.Index, goalID, err)
				}
			}
		}
		if len(c.Steps) > 0 {
			last := c.Steps[len(c.Steps)-1].Index
			for _, q := range []string{qPruneSteps, qPruneStepImage} {
				if err := tx.exec(q, goalID, stepsKeepFirst, last-stepsKeepLast); err != nil {
					return err
				}
			}
		}
		if len(c.Events) > 0 {
			// Numbered from the stored last one: the transaction holds the write lock, so
			// nobody numbers in between.
			next, err := tx.stmt(qNextEventSeq)
			if err != nil {
				return err
			}
			var seq int64
			if err := next.QueryRowContext(tx.ctx, goalID).Scan(&seq); err != nil {
				return err
			}
			for i := range c.Events {
				e := &c.Events[i]
				if e.At.IsZero() {
					e.At = time.Now().UTC()
				}
				e.Seq, e.GoalID = seq, goalID
				seq++
				if err := tx.exec(qSaveEvent, goalID, e.Seq, e.Type, string(orEmptyObject(e.Data)), ms(e.At)); err != nil {
					return fmt.Errorf("save event of goal %s: %w", goalID, err)
				}
			}
		}
		return nil
	})
}

func orEmptyObject(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("{}")
	}
	return b
}

func saveGoal(tx commitTx, g goal.Goal) error {
	js, err := jsonTexts(g.Spec, g.State)
	if err != nil {
		return err
	}
	if err := tx.exec(qSaveGoal, g.ID, js[0], string(g.Status), g.Report, js[1], ms(g.CreatedAt), ms(g.UpdatedAt),
		msPtr(g.StartedAt), msPtr(g.EndedAt)); err != nil {
		return fmt.Errorf("save goal %s: %w", g.ID, err)
	}
	return nil
}

const goalColumns = `id, spec, status, report, state, created_at, updated_at, started_at, ended_at`

func scanGoal(r scanner) (goal.Goal, error) {
	var g goal.Goal
	var spec, state string
	var created, updated int64
	var started, ended sql.NullInt64
	if err := r.Scan(&g.ID, &spec, &g.Status, &g.Report, &state, &created, &updated, &started, &ended); err != nil {
		return g, err
	}
	if err := json.Unmarshal([]byte(spec), &g.Spec); err != nil {
		return g, fmt.Errorf("goal %s: spec: %w", g.ID, err)
	}
	if err := json.Unmarshal([]byte(state), &g.State); err != nil {
		return g, fmt.Errorf("goal %s: state: %w", g.ID, err)
	}
	g.CreatedAt, g.UpdatedAt = at(created), at(updated)
	g.StartedAt, g.EndedAt = fromMS(started), fromMS(ended)
	return g, nil
}

// Goal returns one goal, or goal.ErrNotFound.
func (s *Store) Goal(ctx context.Context, id string) (goal.Goal, error) {
	g, err := scanGoal(s.db.QueryRowContext(ctx, `SELECT `+goalColumns+` FROM goals WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return g, fmt.Errorf("goal %q: %w", id, goal.ErrNotFound)
	}
	return g, err
}

// ListGoals returns every goal, newest activity first.
func (s *Store) ListGoals(ctx context.Context) ([]goal.Goal, error) {
	return queryAll(ctx, s.db, scanGoal, `SELECT `+goalColumns+` FROM goals ORDER BY updated_at DESC, id`)
}

// CountGoals returns how many goals are stored.
func (s *Store) CountGoals(ctx context.Context) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM goals`).Scan(&n)
	return n, err
}

// DeleteGoal removes a goal and everything it recorded.
func (s *Store) DeleteGoal(ctx context.Context, id string) error {
	return s.deleteOne(ctx, fmt.Errorf("goal %q: %w", id, goal.ErrNotFound), `DELETE FROM goals WHERE id = ?`, id)
}

// GoalMessages returns a goal's conversation in order.
func (s *Store) GoalMessages(ctx context.Context, id string) ([]llm.Message, error) {
	return queryAll(ctx, s.db, func(r scanner) (llm.Message, error) {
		var raw string
		var m llm.Message
		if err := r.Scan(&raw); err != nil {
			return m, err
		}
		if err := json.Unmarshal([]byte(raw), &m); err != nil {
			return m, fmt.Errorf("goal %s: a stored message is damaged: %w", id, err)
		}
		return m, nil
	}, `SELECT message FROM goal_messages WHERE goal_id = ? ORDER BY seq`, id)
}

// GoalSteps returns up to limit steps with index > after, in order.
func (s *Store) GoalSteps(ctx context.Context, id string, after, limit int) ([]goal.Step, error) {
	return queryAll(ctx, s.db, func(r scanner) (goal.Step, error) {
		st := goal.Step{GoalID: id}
		var args, usage string
		var started int64
		if err := r.Scan(&st.Index, &st.CallID, &st.Tool, &args, &st.Result, &st.IsError, &started, &st.DurationMS, &st.Images, &usage); err != nil {
			return st, err
		}
		if usage != "" {
			var u llm.Usage
			if json.Unmarshal([]byte(usage), &u) == nil {
				st.Usage = &u
			}
		}
		st.Args, st.StartedAt = json.RawMessage(args), at(started)
		return st, nil
	}, `SELECT idx, call_id, tool, args, result, is_error, started_at, duration_ms, images, usage FROM goal_steps
		WHERE goal_id = ? AND idx > ? ORDER BY idx LIMIT ?`, id, after, limit)
}

// GoalStepImage returns picture n of a goal's step.
func (s *Store) GoalStepImage(ctx context.Context, id string, index, n int) (llm.Image, error) {
	var img llm.Image
	err := s.db.QueryRowContext(ctx, `SELECT media_type, data FROM goal_step_images WHERE goal_id = ? AND idx = ? AND n = ?`,
		id, index, n).Scan(&img.MediaType, &img.Data)
	if errors.Is(err, sql.ErrNoRows) {
		return img, fmt.Errorf("goal %s has no picture %d at step %d: %w", id, n, index, goal.ErrNotFound)
	}
	return img, err
}

// GoalEvents returns a goal's events with seq > after, in order.
func (s *Store) GoalEvents(ctx context.Context, id string, after int64) ([]goal.Event, error) {
	return queryAll(ctx, s.db, func(r scanner) (goal.Event, error) {
		e := goal.Event{GoalID: id}
		var data string
		var when int64
		err := r.Scan(&e.Seq, &e.Type, &data, &when)
		e.Data, e.At = json.RawMessage(data), at(when)
		return e, err
	}, `SELECT seq, type, data, at FROM goal_events WHERE goal_id = ? AND seq > ? ORDER BY seq`, id, after)
}

// SaveApproval inserts or updates an approval request of a goal or a workspace's chat.
func (s *Store) SaveApproval(ctx context.Context, a agent.Approval) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO approvals(id, goal_id, workspace_id, conversation_id, call_id, tool, args, risk, reason, status, answer_reason, created_at, answered_at)
		VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT(id) DO UPDATE SET status = excluded.status, answer_reason = excluded.answer_reason, answered_at = excluded.answered_at`,
		a.ID, nullIfEmpty(a.GoalID), nullIfEmpty(a.WorkspaceID), nullIfEmpty(a.ConversationID), a.CallID, a.Tool, string(orEmptyObject(a.Args)), a.Risk, a.Reason,
		string(a.Status), a.AnswerReason, ms(a.CreatedAt), msPtr(a.AnsweredAt))
	return err
}

// Approvals returns approvals, pending ones only if pendingOnly, oldest first.
func (s *Store) Approvals(ctx context.Context, pendingOnly bool) ([]agent.Approval, error) {
	q := `SELECT id, coalesce(goal_id, ''), coalesce(workspace_id, ''), coalesce(conversation_id, ''), call_id, tool, args, risk, reason, status, answer_reason, created_at, answered_at FROM approvals`
	if pendingOnly {
		q += ` WHERE status = 'pending'`
	}
	return queryAll(ctx, s.db, func(r scanner) (agent.Approval, error) {
		var a agent.Approval
		var args string
		var created int64
		var answered sql.NullInt64
		err := r.Scan(&a.ID, &a.GoalID, &a.WorkspaceID, &a.ConversationID, &a.CallID, &a.Tool, &args, &a.Risk, &a.Reason, &a.Status, &a.AnswerReason, &created, &answered)
		a.Args, a.CreatedAt, a.AnsweredAt = json.RawMessage(args), at(created), fromMS(answered)
		return a, err
	}, q+` ORDER BY created_at, id`)
}

// nullIfEmpty stores "" as NULL, for optional references.
func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/clusterspace/clusterspace/backend/review"
)

// AddReviewComment stores a review comment on a change.
func (s *Store) AddReviewComment(ctx context.Context, c review.Comment) error {
	return s.save(ctx, fmt.Sprintf("save review comment on %s", c.Ref),
		`INSERT INTO review_comments(id, subject, file, line, side, body, created_at, sent_at) VALUES(?, ?, ?, ?, ?, ?, ?, ?)`,
		c.ID, c.Ref, c.File, c.Line, c.Side, c.Body, ms(c.CreatedAt), msPtr(c.SentAt))
}

// ReviewComments returns a change's comments, oldest first; unsentOnly leaves out those
// already sent to its agent.
func (s *Store) ReviewComments(ctx context.Context, subject string, unsentOnly bool) ([]review.Comment, error) {
	q := `SELECT id, subject, file, line, side, body, created_at, sent_at FROM review_comments WHERE subject = ?`
	if unsentOnly {
		q += ` AND sent_at IS NULL`
	}
	out, err := queryAll(ctx, s.db, scanReviewComment, q+` ORDER BY created_at, rowid`, subject)
	if out == nil {
		out = []review.Comment{}
	}
	return out, err
}

// ReviewComment returns one comment, or an error wrapping review.ErrNotFound.
func (s *Store) ReviewComment(ctx context.Context, id string) (review.Comment, error) {
	c, err := scanReviewComment(s.db.QueryRowContext(ctx, `SELECT id, subject, file, line, side, body, created_at, sent_at FROM review_comments WHERE id = ?`, id))
	if err == sql.ErrNoRows {
		return c, fmt.Errorf("review comment %q does not exist (deleted, or never made): %w", id, review.ErrNotFound)
	}
	return c, err
}

// DeleteReviewComment removes a comment; an unknown id is review.ErrNotFound.
func (s *Store) DeleteReviewComment(ctx context.Context, id string) error {
	return s.deleteOne(ctx, fmt.Errorf("review comment %q does not exist (deleted, or never made): %w", id, review.ErrNotFound),
		`DELETE FROM review_comments WHERE id = ?`, id)
}

// MarkReviewCommentsSent records that the comments went to the agent at at (those already
// marked keep their time).
func (s *Store) MarkReviewCommentsSent(ctx context.Context, ids []string, at time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	args := []any{ms(at)}
	for _, id := range ids {
		args = append(args, id)
	}
	return s.save(ctx, fmt.Sprintf("mark %d review comments sent", len(ids)),
		`UPDATE review_comments SET sent_at = ? WHERE sent_at IS NULL AND id IN (?`+strings.Repeat(", ?", len(ids)-1)+`)`, args...)
}

func scanReviewComment(r scanner) (review.Comment, error) {
	var c review.Comment
	var created int64
	var sent sql.NullInt64
	if err := r.Scan(&c.ID, &c.Ref, &c.File, &c.Line, &c.Side, &c.Body, &created, &sent); err != nil {
		return c, err
	}
	c.CreatedAt = at(created)
	if sent.Valid {
		t := at(sent.Int64)
		c.SentAt = &t
	}
	return c, nil
}

package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"
)

// The shapes every table's methods share, kept here once: read all the rows of a query,
// write a row and say what was being saved when it fails, delete one row and say which
// when there was none, and read back a stored millisecond time.

// scanner is a *sql.Row or *sql.Rows: what a row's scan function reads from.
type scanner interface{ Scan(...any) error }

// queryAll runs query and turns each row into a T with scan, in the query's order.
func queryAll[T any](ctx context.Context, db *sql.DB, scan func(scanner) (T, error), query string, args ...any) ([]T, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// save runs one write; a failure says what was being saved ("save provider \"x\"").
func (s *Store) save(ctx context.Context, what string, query string, args ...any) error {
	if _, err := s.db.ExecContext(ctx, query, args...); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// deleteOne runs a DELETE of one row; when it removed none, the error is notFound.
func (s *Store) deleteOne(ctx context.Context, notFound error, query string, args ...any) error {
	res, err := s.db.ExecContext(ctx, query, args...)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return notFound
	}
	return nil
}

// at is a stored millisecond time, in UTC.
func at(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// created and updated are a row's two stored times, scanned side by side.
type stamps struct{ created, updated int64 }

// times returns the two times, in UTC.
func (t stamps) times() (created, updated time.Time) { return at(t.created), at(t.updated) }

// jsonTexts is each value's JSON text, as stored, in order.
func jsonTexts(vs ...any) ([]string, error) {
	out := make([]string, len(vs))
	for i, v := range vs {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		out[i] = string(b)
	}
	return out, nil
}

// optionalJSON is an optional value as stored: its JSON text, or "" when there is none.
func optionalJSON[T any](v *T) (string, error) {
	if v == nil {
		return "", nil
	}
	b, err := json.Marshal(v)
	return string(b), err
}

// deleteAllOf runs each DELETE with the same key in one transaction: a row and the rows
// that hang off it go together or not at all.
func (s *Store) deleteAllOf(ctx context.Context, key any, queries ...string) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		for _, q := range queries {
			if _, err := tx.ExecContext(ctx, q, key); err != nil {
				return err
			}
		}
		return nil
	})
}

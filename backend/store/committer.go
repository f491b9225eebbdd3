package store

import (
	"context"
	"database/sql"
	"errors"
	"sync"
)

// committer runs goal commits, several a step, on a connection of their own with their
// statements prepared once for the store's life. Through the pool, each commit took a
// connection, prepared every statement anew (as long as running it) and started a goroutine
// to watch the transaction's context; here a commit is its SQL and nothing else. Commits take
// turns on the connection — SQLite has one writer at a time anyway — and the mutex hands it
// on at once where SQLite's busy wait would sleep.
type committer struct {
	mu     sync.Mutex
	conn   *sql.Conn // nil until the first commit, or after a broken one
	stmts  map[string]*sql.Stmt
	closed bool
	// prepared counts the statements prepared so far: tests check that commits reuse them.
	prepared int
}

// errStoreClosed is returned for a commit asked of a closed store.
var errStoreClosed = errors.New("the database is closed")

// commitTx is one commit's transaction on the committer's connection.
type commitTx struct {
	ctx context.Context
	c   *committer
}

// inCommit runs fn in one immediate (write-locked) transaction on the committer's connection,
// committing if it returns nil.
func (s *Store) inCommit(ctx context.Context, fn func(tx commitTx) error) error {
	c := &s.commits
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return errStoreClosed
	}
	if c.conn == nil {
		conn, err := s.db.Conn(ctx)
		if err != nil {
			return err
		}
		c.conn = conn
	}
	// IMMEDIATE, as _txlock makes every other transaction: the write lock up front.
	if _, err := c.conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		c.reset() // the connection may be broken: the next commit takes another
		return err
	}
	err := fn(commitTx{ctx: ctx, c: c})
	if err == nil {
		_, err = c.conn.ExecContext(ctx, "COMMIT")
	}
	if err != nil {
		// The error worth reporting is err; a rollback that fails leaves the connection in
		// doubt, so it is given up.
		if _, rerr := c.conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK"); rerr != nil {
			c.reset()
		}
		return err
	}
	return nil
}

// stmt returns query prepared on the committer's connection, preparing it the first time.
func (tx commitTx) stmt(query string) (*sql.Stmt, error) {
	c := tx.c
	if st, ok := c.stmts[query]; ok {
		return st, nil
	}
	// Prepared without the caller's deadline: the statement outlives this commit.
	st, err := c.conn.PrepareContext(context.WithoutCancel(tx.ctx), query)
	if err != nil {
		return nil, err
	}
	if c.stmts == nil {
		c.stmts = map[string]*sql.Stmt{}
	}
	c.stmts[query] = st
	c.prepared++
	return st, nil
}

// exec runs query with args through its prepared statement.
func (tx commitTx) exec(query string, args ...any) error {
	st, err := tx.stmt(query)
	if err != nil {
		return err
	}
	_, err = st.ExecContext(tx.ctx, args...)
	return err
}

// reset closes the statements and hands the connection back to the pool. Callers hold mu.
func (c *committer) reset() {
	for _, st := range c.stmts {
		st.Close() // Best effort: the connection goes with them.
	}
	c.stmts = nil
	if c.conn != nil {
		c.conn.Close() // Best effort: closing the database closes it anyway.
		c.conn = nil
	}
}

// close ends the committer, after any commit under way; the store closes its database after.
func (c *committer) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reset()
	c.closed = true
}

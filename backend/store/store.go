// Package store is ClusterSpace's one SQLite database: schema migrations embedded in the
// binary and applied at start, and the queries every service persists through.
package store

import (
	"bytes"
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"

	_ "github.com/mattn/go-sqlite3" // registers the "sqlite3" driver
)

// FileName is the database's name inside the data dir.
const FileName = "clusterspace.db"

// fileMode keeps the database and its -wal and -shm files to their owner: they hold the
// goals' transcripts and the encrypted secrets.
const fileMode = 0o600

// busyTimeoutMS is how long a writer waits for another writer before SQLITE_BUSY: long enough
// to ride out a checkpoint, short enough that a real deadlock surfaces as an error.
const busyTimeoutMS = 5000

// sqliteHeader starts every SQLite 3 database file.
var sqliteHeader = []byte("SQLite format 3\x00")

//go:embed migrations/*.sql
var migrationFiles embed.FS

// ErrNewerSchema means the database was written by a newer ClusterSpace.
var ErrNewerSchema = errors.New("database schema is newer than this build")

// ErrCorrupt means the file is not a healthy SQLite database.
var ErrCorrupt = errors.New("database file is not a healthy SQLite database")

// Store is the open database.
type Store struct {
	db      *sql.DB
	path    string
	commits committer
}

type migration struct {
	version int
	name    string
	sql     string
}

func loadMigrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %q must be named NNNN_description.sql", e.Name())
		}
		body, err := fs.ReadFile(migrationFiles, path.Join("migrations", e.Name()))
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: e.Name(), sql: string(body)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	for i, m := range ms {
		if m.version != i+1 {
			return nil, fmt.Errorf("migrations must be numbered 1, 2, 3…; %q breaks the sequence", m.name)
		}
	}
	return ms, nil
}

// SchemaVersion is the schema version this build migrates to.
func SchemaVersion() int {
	ms, err := loadMigrations()
	if err != nil {
		panic(err) // the embedded files are part of the binary: a bad name is a build bug
	}
	return len(ms)
}

// Open opens (creating if needed) the database at path and migrates it to SchemaVersion.
// A file that is not a healthy SQLite database, or one from a newer ClusterSpace, is refused
// before anything is written to it, so it is never overwritten or truncated.
func Open(ctx context.Context, path string) (*Store, error) {
	migrations, err := loadMigrations()
	if err != nil {
		return nil, err
	}
	if err := inspect(ctx, path, len(migrations)); err != nil {
		return nil, err
	}
	// SQLite creates -wal and -shm with the database file's mode, so the file is made private
	// before SQLite opens it, and all three again once it has (to tighten older ones).
	if err := createPrivate(path); err != nil {
		return nil, err
	}
	q := url.Values{}
	q.Set("_journal_mode", "WAL")
	q.Set("_synchronous", "NORMAL")
	q.Set("_foreign_keys", "on")
	q.Set("_busy_timeout", strconv.Itoa(busyTimeoutMS))
	q.Set("_txlock", "immediate") // writers take the lock up front instead of failing on upgrade
	db, err := sql.Open("sqlite3", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("open database %q: %w", path, err)
	}
	s := &Store{db: db, path: path}
	if err := s.migrate(ctx, migrations); err != nil {
		db.Close()
		return nil, err
	}
	if err := tightenFiles(path); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// createPrivate creates an empty database file with fileMode (an empty file is an empty
// database to SQLite), or tightens an existing one and its -wal and -shm.
func createPrivate(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, fileMode)
	if errors.Is(err, os.ErrExist) {
		return tightenFiles(path)
	}
	if err != nil {
		return fmt.Errorf("create database %q: %w", path, err)
	}
	defer f.Close()
	// The umask cannot add permissions, but a chmod states the mode whatever it is.
	return f.Chmod(fileMode)
}

// tightenFiles makes the database file and its -wal and -shm (those that exist) fileMode.
func tightenFiles(path string) error {
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		info, err := os.Stat(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("database file %q: %w", p, err)
		}
		if info.Mode().Perm() == fileMode {
			continue
		}
		if err := os.Chmod(p, fileMode); err != nil {
			return fmt.Errorf("database file %q has mode %o and cannot be made private (0600): %w: fix its owner or pass another --data-dir", p, info.Mode().Perm(), err)
		}
	}
	return nil
}

// ErrNoDatabase means a read-only open found no database file.
var ErrNoDatabase = errors.New("no database yet")

// OpenReadOnly opens an existing database for reading only, as a second process does while
// another owns the data dir: it neither creates, migrates nor repairs anything. A database at
// an older schema is refused, since the queries of this build expect the newest.
func OpenReadOnly(ctx context.Context, path string) (*Store, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w at %q", ErrNoDatabase, path)
	}
	q := url.Values{}
	q.Set("mode", "ro")
	q.Set("_busy_timeout", strconv.Itoa(busyTimeoutMS))
	q.Set("_query_only", "true")
	db, err := sql.Open("sqlite3", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("open database %q read-only: %w", path, err)
	}
	s := &Store{db: db, path: path}
	v, err := s.Version(ctx)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("read database %q: %w", path, err)
	}
	if latest := SchemaVersion(); v != latest {
		db.Close()
		if v > latest {
			return nil, fmt.Errorf("%w: %q has schema version %d but this ClusterSpace understands up to %d: run a newer ClusterSpace", ErrNewerSchema, path, v, latest)
		}
		return nil, fmt.Errorf("database %q has schema version %d and this ClusterSpace reads %d: let the process that owns the data dir finish, then run this again (it upgrades the database)", path, v, latest)
	}
	return s, nil
}

// inspect checks an existing file read-only: the header, the schema version, and SQLite's own
// quick_check. Nothing here writes to the file.
func inspect(ctx context.Context, path string, latest int) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil // a new database
	}
	if err != nil {
		return fmt.Errorf("open database %q: %w", path, err)
	}
	head := make([]byte, len(sqliteHeader))
	n, err := io.ReadFull(f, head)
	f.Close()
	if n == 0 && (err == io.EOF || err == io.ErrUnexpectedEOF) {
		return nil // an empty file is an empty database to SQLite too
	}
	if !bytes.Equal(head[:n], sqliteHeader) {
		return fmt.Errorf("%w: %q does not start with the SQLite header. ClusterSpace left it untouched: move it aside (or restore a backup) and start again, or pass another --data-dir", ErrCorrupt, path)
	}

	// With no WAL beside it, the file alone is the database: immutable=1 reads it without
	// creating -wal/-shm files. With a WAL (after a crash), read-only mode must replay it.
	mode := "?immutable=1"
	if _, err := os.Stat(path + "-wal"); err == nil {
		mode = "?mode=ro"
	}
	ro, err := sql.Open("sqlite3", "file:"+path+mode)
	if err != nil {
		return fmt.Errorf("open database %q read-only: %w", path, err)
	}
	defer ro.Close()
	var version int
	if err := ro.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return fmt.Errorf("%w: reading %q failed (%v). ClusterSpace left it untouched: move it aside (or restore a backup), or pass another --data-dir", ErrCorrupt, path, err)
	}
	if version > latest {
		return fmt.Errorf("%w: %q has schema version %d but this ClusterSpace understands up to %d. It was left untouched: run a newer ClusterSpace, or pass another --data-dir", ErrNewerSchema, path, version, latest)
	}
	var check string
	if err := ro.QueryRowContext(ctx, "PRAGMA quick_check").Scan(&check); err != nil || check != "ok" {
		if err != nil {
			check = err.Error()
		}
		return fmt.Errorf("%w: SQLite's integrity check of %q failed (%s). ClusterSpace left it untouched: move it aside (or restore a backup) and start again, or pass another --data-dir", ErrCorrupt, path, check)
	}
	return nil
}

func (s *Store) migrate(ctx context.Context, migrations []migration) error {
	var current int
	if err := s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&current); err != nil {
		return fmt.Errorf("read schema version of %q: %w", s.path, err)
	}
	for _, m := range migrations[current:] {
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("migration %s: %w", m.name, err)
		}
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %s failed: %w", m.name, err)
		}
		// user_version lives in the file header and is written inside the transaction, so a
		// crash leaves either the whole migration or none of it.
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", m.version)); err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %s: set version: %w", m.name, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("migration %s: commit: %w", m.name, err)
		}
	}
	return nil
}

// Version is the schema version of the open database.
func (s *Store) Version(ctx context.Context) (int, error) {
	var v int
	err := s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v)
	return v, err
}

// Path is the database file's path.
func (s *Store) Path() string { return s.path }

// Close closes the database.
func (s *Store) Close() error {
	s.commits.close()
	return s.db.Close()
}

// inTx runs fn in one transaction, committing if it returns nil.
func (s *Store) inTx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback() // Best effort: the error from fn is the one worth reporting.
		return err
	}
	return tx.Commit()
}

package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// SecretRow is how a secret is recorded: where its value lives and, for the file backend,
// the sealed value. The store never sees a plain-text secret.
type SecretRow struct {
	Name       string
	Backend    string // "keyring" or "file"
	Ciphertext []byte
}

// SecretRow returns the record of a secret, or false.
func (s *Store) SecretRow(ctx context.Context, name string) (SecretRow, bool, error) {
	r := SecretRow{Name: name}
	err := s.db.QueryRowContext(ctx, `SELECT backend, ciphertext FROM secrets WHERE name = ?`, name).Scan(&r.Backend, &r.Ciphertext)
	if errors.Is(err, sql.ErrNoRows) {
		return r, false, nil
	}
	return r, err == nil, err
}

// PutSecretRow records a secret, replacing any earlier record of the same name.
func (s *Store) PutSecretRow(ctx context.Context, r SecretRow) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO secrets(name, backend, ciphertext, updated_at) VALUES(?, ?, ?, ?)
		ON CONFLICT(name) DO UPDATE SET backend = excluded.backend, ciphertext = excluded.ciphertext, updated_at = excluded.updated_at`,
		r.Name, r.Backend, r.Ciphertext, time.Now().UnixMilli())
	return err
}

// DeleteSecretRow forgets a secret's record (no error if there was none).
func (s *Store) DeleteSecretRow(ctx context.Context, name string) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM secrets WHERE name = ?`, name)
	return err
}

// SecretRows lists every secret's record, by name.
func (s *Store) SecretRows(ctx context.Context) ([]SecretRow, error) {
	return queryAll(ctx, s.db, func(row scanner) (SecretRow, error) {
		var r SecretRow
		err := row.Scan(&r.Name, &r.Backend, &r.Ciphertext)
		return r, err
	}, `SELECT name, backend, ciphertext FROM secrets ORDER BY name`)
}

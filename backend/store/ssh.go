package store

import (
	"context"
	"fmt"
	"time"

	"github.com/clusterspace/clusterspace/backend/config"
)

// ListSSHServers returns the saved SSH servers by name.
func (s *Store) ListSSHServers(ctx context.Context) ([]config.SSHServer, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, name, host, port, user, key_path, created_at, updated_at FROM ssh_servers ORDER BY name COLLATE NOCASE`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []config.SSHServer
	for rows.Next() {
		var v config.SSHServer
		var created, updated int64
		if err := rows.Scan(&v.ID, &v.Name, &v.Host, &v.Port, &v.User, &v.KeyPath, &created, &updated); err != nil {
			return nil, err
		}
		v.CreatedAt, v.UpdatedAt = time.UnixMilli(created).UTC(), time.UnixMilli(updated).UTC()
		out = append(out, v)
	}
	return out, rows.Err()
}

// SaveSSHServer inserts or replaces a saved server.
func (s *Store) SaveSSHServer(ctx context.Context, v config.SSHServer) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO ssh_servers(id, name, host, port, user, key_path, created_at, updated_at) VALUES(?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT(id) DO UPDATE SET name = excluded.name, host = excluded.host, port = excluded.port, user = excluded.user,
			key_path = excluded.key_path, updated_at = excluded.updated_at`,
		v.ID, v.Name, v.Host, v.Port, v.User, v.KeyPath, v.CreatedAt.UnixMilli(), v.UpdatedAt.UnixMilli())
	if err != nil {
		return fmt.Errorf("save SSH server %q: %w", v.Name, err)
	}
	return nil
}

// DeleteSSHServer removes a saved server, or returns config.ErrNotFound.
func (s *Store) DeleteSSHServer(ctx context.Context, id string) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM ssh_servers WHERE id = ?`, id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("SSH server %q: %w", id, config.ErrNotFound)
	}
	return nil
}

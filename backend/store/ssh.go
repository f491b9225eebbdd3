package store

import (
	"context"
	"fmt"

	"github.com/clusterspace/clusterspace/backend/config"
)

// ListSSHServers returns the saved SSH servers by name.
func (s *Store) ListSSHServers(ctx context.Context) ([]config.SSHServer, error) {
	return queryAll(ctx, s.db, func(r scanner) (config.SSHServer, error) {
		var v config.SSHServer
		var t stamps
		err := r.Scan(&v.ID, &v.Name, &v.Host, &v.Port, &v.User, &v.KeyPath, &t.created, &t.updated)
		v.CreatedAt, v.UpdatedAt = t.times()
		return v, err
	}, `SELECT id, name, host, port, user, key_path, created_at, updated_at FROM ssh_servers ORDER BY name COLLATE NOCASE`)
}

// SaveSSHServer inserts or replaces a saved server.
func (s *Store) SaveSSHServer(ctx context.Context, v config.SSHServer) error {
	return s.save(ctx, fmt.Sprintf("save SSH server %q", v.Name), `INSERT INTO ssh_servers(id, name, host, port, user, key_path, created_at, updated_at) VALUES(?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT(id) DO UPDATE SET name = excluded.name, host = excluded.host, port = excluded.port, user = excluded.user,
			key_path = excluded.key_path, updated_at = excluded.updated_at`,
		v.ID, v.Name, v.Host, v.Port, v.User, v.KeyPath, v.CreatedAt.UnixMilli(), v.UpdatedAt.UnixMilli())
}

// DeleteSSHServer removes a saved server, or returns config.ErrNotFound.
func (s *Store) DeleteSSHServer(ctx context.Context, id string) error {
	return s.deleteOne(ctx, fmt.Errorf("SSH server %q: %w", id, config.ErrNotFound), `DELETE FROM ssh_servers WHERE id = ?`, id)
}

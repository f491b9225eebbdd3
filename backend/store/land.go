package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/clusterspace/clusterspace/backend/land"
)

// LandPrefs returns what is remembered about landing in a repository (zero Prefs naming the
// repository when nothing is).
func (s *Store) LandPrefs(ctx context.Context, repo string) (land.Prefs, error) {
	p := land.Prefs{Repo: repo}
	err := s.db.QueryRowContext(ctx, `SELECT strategy, check_cmd, on_refuse FROM land_prefs WHERE repo = ?`, repo).
		Scan(&p.Strategy, &p.Check, &p.OnRefuse)
	if errors.Is(err, sql.ErrNoRows) {
		return p, nil
	}
	return p, err
}

// SaveLandPrefs remembers a repository's landing choices.
func (s *Store) SaveLandPrefs(ctx context.Context, p land.Prefs) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO land_prefs(repo, strategy, check_cmd, on_refuse, updated_at) VALUES(?, ?, ?, ?, ?)
		ON CONFLICT(repo) DO UPDATE SET strategy = excluded.strategy, check_cmd = excluded.check_cmd, on_refuse = excluded.on_refuse, updated_at = excluded.updated_at`,
		p.Repo, string(p.Strategy), p.Check, string(p.OnRefuse), ms(time.Now()))
	return err
}

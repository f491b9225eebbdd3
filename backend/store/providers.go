package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/clusterspace/clusterspace/backend/config"
)

// ListProviders returns every provider by name (API key fields are the service's to fill).
func (s *Store) ListProviders(ctx context.Context) ([]config.Provider, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, name, kind, base_url, model, vision_model, temperature, max_tokens, thinking,
		context_window, created_at, updated_at FROM providers ORDER BY name COLLATE NOCASE`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []config.Provider
	for rows.Next() {
		var p config.Provider
		var temp sql.NullFloat64
		var created, updated int64
		if err := rows.Scan(&p.ID, &p.Name, &p.Kind, &p.BaseURL, &p.Model, &p.VisionModel, &temp, &p.MaxTokens, &p.Thinking,
			&p.ContextWindow, &created, &updated); err != nil {
			return nil, err
		}
		if temp.Valid {
			p.Temperature = &temp.Float64
		}
		p.CreatedAt, p.UpdatedAt = time.UnixMilli(created).UTC(), time.UnixMilli(updated).UTC()
		out = append(out, p)
	}
	return out, rows.Err()
}

// SaveProvider inserts or replaces a provider.
func (s *Store) SaveProvider(ctx context.Context, p config.Provider) error {
	var temp sql.NullFloat64
	if p.Temperature != nil {
		temp = sql.NullFloat64{Float64: *p.Temperature, Valid: true}
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO providers(id, name, kind, base_url, model, vision_model, temperature, max_tokens, thinking,
		context_window, created_at, updated_at) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT(id) DO UPDATE SET name = excluded.name, kind = excluded.kind, base_url = excluded.base_url, model = excluded.model,
			vision_model = excluded.vision_model, temperature = excluded.temperature, max_tokens = excluded.max_tokens,
			thinking = excluded.thinking, context_window = excluded.context_window, updated_at = excluded.updated_at`,
		p.ID, p.Name, p.Kind, p.BaseURL, p.Model, p.VisionModel, temp, p.MaxTokens, p.Thinking, p.ContextWindow,
		p.CreatedAt.UnixMilli(), p.UpdatedAt.UnixMilli())
	if err != nil {
		return fmt.Errorf("save provider %q: %w", p.Name, err)
	}
	return nil
}

// DeleteProvider removes a provider, or returns config.ErrNotFound.
func (s *Store) DeleteProvider(ctx context.Context, id string) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM providers WHERE id = ?`, id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("provider %q: %w", id, config.ErrNotFound)
	}
	return nil
}

package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/clusterspace/clusterspace/backend/config"
)

// ListProviders returns every provider by name (API key fields are the service's to fill).
func (s *Store) ListProviders(ctx context.Context) ([]config.Provider, error) {
	return queryAll(ctx, s.db, scanProvider, `SELECT id, name, kind, base_url, model, vision_model, temperature, max_tokens, thinking,
		context_window, created_at, updated_at FROM providers ORDER BY name COLLATE NOCASE`)
}

func scanProvider(r scanner) (config.Provider, error) {
	var p config.Provider
	var temp sql.NullFloat64
	var t stamps
	if err := r.Scan(&p.ID, &p.Name, &p.Kind, &p.BaseURL, &p.Model, &p.VisionModel, &temp, &p.MaxTokens, &p.Thinking,
		&p.ContextWindow, &t.created, &t.updated); err != nil {
		return p, err
	}
	if temp.Valid {
		p.Temperature = &temp.Float64
	}
	p.CreatedAt, p.UpdatedAt = t.times()
	return p, nil
}

// SaveProvider inserts or replaces a provider.
func (s *Store) SaveProvider(ctx context.Context, p config.Provider) error {
	var temp sql.NullFloat64
	if p.Temperature != nil {
		temp = sql.NullFloat64{Float64: *p.Temperature, Valid: true}
	}
	return s.save(ctx, fmt.Sprintf("save provider %q", p.Name), `INSERT INTO providers(id, name, kind, base_url, model, vision_model, temperature, max_tokens, thinking,
		context_window, created_at, updated_at) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT(id) DO UPDATE SET name = excluded.name, kind = excluded.kind, base_url = excluded.base_url, model = excluded.model,
			vision_model = excluded.vision_model, temperature = excluded.temperature, max_tokens = excluded.max_tokens,
			thinking = excluded.thinking, context_window = excluded.context_window, updated_at = excluded.updated_at`,
		p.ID, p.Name, p.Kind, p.BaseURL, p.Model, p.VisionModel, temp, p.MaxTokens, p.Thinking, p.ContextWindow,
		p.CreatedAt.UnixMilli(), p.UpdatedAt.UnixMilli())
}

// DeleteProvider removes a provider, or returns config.ErrNotFound.
func (s *Store) DeleteProvider(ctx context.Context, id string) error {
	return s.deleteOne(ctx, fmt.Errorf("provider %q: %w", id, config.ErrNotFound), `DELETE FROM providers WHERE id = ?`, id)
}

package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// ErrNoRow means the recipe or login asked for is not stored.
var ErrNoRow = errors.New("not found")

// RecipeRow is a browser recipe as stored; Steps is its JSON list of tool calls.
type RecipeRow struct {
	Name        string
	Description string
	Steps       []byte
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// BrowserRecipes lists the saved recipes by name.
func (s *Store) BrowserRecipes(ctx context.Context) ([]RecipeRow, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT name, description, steps, created_at, updated_at FROM browser_recipes ORDER BY name COLLATE NOCASE`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []RecipeRow
	for rows.Next() {
		var r RecipeRow
		var steps string
		var created, updated int64
		if err := rows.Scan(&r.Name, &r.Description, &steps, &created, &updated); err != nil {
			return nil, err
		}
		r.Steps, r.CreatedAt, r.UpdatedAt = []byte(steps), time.UnixMilli(created).UTC(), time.UnixMilli(updated).UTC()
		out = append(out, r)
	}
	return out, rows.Err()
}

// BrowserRecipe returns one saved recipe, or ErrNoRow.
func (s *Store) BrowserRecipe(ctx context.Context, name string) (RecipeRow, error) {
	r := RecipeRow{Name: name}
	var steps string
	var created, updated int64
	err := s.db.QueryRowContext(ctx, `SELECT name, description, steps, created_at, updated_at FROM browser_recipes WHERE name = ?`, name).
		Scan(&r.Name, &r.Description, &steps, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return r, fmt.Errorf("recipe %q: %w", name, ErrNoRow)
	}
	r.Steps, r.CreatedAt, r.UpdatedAt = []byte(steps), time.UnixMilli(created).UTC(), time.UnixMilli(updated).UTC()
	return r, err
}

// SaveBrowserRecipe inserts a recipe or replaces the one of the same name (keeping its
// creation time).
func (s *Store) SaveBrowserRecipe(ctx context.Context, r RecipeRow) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO browser_recipes(name, description, steps, created_at, updated_at) VALUES(?, ?, ?, ?, ?)
		ON CONFLICT(name) DO UPDATE SET description = excluded.description, steps = excluded.steps, updated_at = excluded.updated_at`,
		r.Name, r.Description, string(r.Steps), r.CreatedAt.UnixMilli(), r.UpdatedAt.UnixMilli())
	if err != nil {
		return fmt.Errorf("save recipe %q: %w", r.Name, err)
	}
	return nil
}

// DeleteBrowserRecipe removes a recipe, or returns ErrNoRow.
func (s *Store) DeleteBrowserRecipe(ctx context.Context, name string) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM browser_recipes WHERE name = ?`, name)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("recipe %q: %w", name, ErrNoRow)
	}
	return nil
}

// LoginRow is a saved login as stored: where, who, and the name of its password's secret.
// The password itself is in the vault, never here.
type LoginRow struct {
	ID         string
	Origin     string
	Username   string
	SecretName string
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// SavedLogins lists the saved logins by origin.
func (s *Store) SavedLogins(ctx context.Context) ([]LoginRow, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, origin, username, secret_name, created_at, updated_at FROM saved_logins ORDER BY origin`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []LoginRow
	for rows.Next() {
		var r LoginRow
		var created, updated int64
		if err := rows.Scan(&r.ID, &r.Origin, &r.Username, &r.SecretName, &created, &updated); err != nil {
			return nil, err
		}
		r.CreatedAt, r.UpdatedAt = time.UnixMilli(created).UTC(), time.UnixMilli(updated).UTC()
		out = append(out, r)
	}
	return out, rows.Err()
}

// SaveLogin inserts or updates a saved login by id.
func (s *Store) SaveLogin(ctx context.Context, r LoginRow) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO saved_logins(id, origin, username, secret_name, created_at, updated_at) VALUES(?, ?, ?, ?, ?, ?)
		ON CONFLICT(id) DO UPDATE SET origin = excluded.origin, username = excluded.username, secret_name = excluded.secret_name, updated_at = excluded.updated_at`,
		r.ID, r.Origin, r.Username, r.SecretName, r.CreatedAt.UnixMilli(), r.UpdatedAt.UnixMilli())
	if err != nil {
		return fmt.Errorf("save the login for %s: %w", r.Origin, err)
	}
	return nil
}

// DeleteLogin removes a saved login, or returns ErrNoRow.
func (s *Store) DeleteLogin(ctx context.Context, id string) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM saved_logins WHERE id = ?`, id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("login %q: %w", id, ErrNoRow)
	}
	return nil
}

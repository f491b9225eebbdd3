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
	return queryAll(ctx, s.db, scanRecipe, `SELECT `+recipeColumns+` FROM browser_recipes ORDER BY name COLLATE NOCASE`)
}

const recipeColumns = `name, description, steps, created_at, updated_at`

func scanRecipe(row scanner) (RecipeRow, error) {
	var r RecipeRow
	var steps string
	var t stamps
	err := row.Scan(&r.Name, &r.Description, &steps, &t.created, &t.updated)
	r.Steps = []byte(steps)
	r.CreatedAt, r.UpdatedAt = t.times()
	return r, err
}

// BrowserRecipe returns one saved recipe, or ErrNoRow.
func (s *Store) BrowserRecipe(ctx context.Context, name string) (RecipeRow, error) {
	r, err := scanRecipe(s.db.QueryRowContext(ctx, `SELECT `+recipeColumns+` FROM browser_recipes WHERE name = ?`, name))
	if errors.Is(err, sql.ErrNoRows) {
		return RecipeRow{Name: name}, fmt.Errorf("recipe %q: %w", name, ErrNoRow)
	}
	return r, err
}

// SaveBrowserRecipe inserts a recipe or replaces the one of the same name (keeping its
// creation time).
func (s *Store) SaveBrowserRecipe(ctx context.Context, r RecipeRow) error {
	return s.save(ctx, fmt.Sprintf("save recipe %q", r.Name), `INSERT INTO browser_recipes(name, description, steps, created_at, updated_at) VALUES(?, ?, ?, ?, ?)
		ON CONFLICT(name) DO UPDATE SET description = excluded.description, steps = excluded.steps, updated_at = excluded.updated_at`,
		r.Name, r.Description, string(r.Steps), r.CreatedAt.UnixMilli(), r.UpdatedAt.UnixMilli())
}

// DeleteBrowserRecipe removes a recipe, or returns ErrNoRow.
func (s *Store) DeleteBrowserRecipe(ctx context.Context, name string) error {
	return s.deleteOne(ctx, fmt.Errorf("recipe %q: %w", name, ErrNoRow), `DELETE FROM browser_recipes WHERE name = ?`, name)
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
	return queryAll(ctx, s.db, func(row scanner) (LoginRow, error) {
		var r LoginRow
		var t stamps
		err := row.Scan(&r.ID, &r.Origin, &r.Username, &r.SecretName, &t.created, &t.updated)
		r.CreatedAt, r.UpdatedAt = t.times()
		return r, err
	}, `SELECT id, origin, username, secret_name, created_at, updated_at FROM saved_logins ORDER BY origin`)
}

// SaveLogin inserts or updates a saved login by id.
func (s *Store) SaveLogin(ctx context.Context, r LoginRow) error {
	return s.save(ctx, "save the login for "+r.Origin, `INSERT INTO saved_logins(id, origin, username, secret_name, created_at, updated_at) VALUES(?, ?, ?, ?, ?, ?)
		ON CONFLICT(id) DO UPDATE SET origin = excluded.origin, username = excluded.username, secret_name = excluded.secret_name, updated_at = excluded.updated_at`,
		r.ID, r.Origin, r.Username, r.SecretName, r.CreatedAt.UnixMilli(), r.UpdatedAt.UnixMilli())
}

// DeleteLogin removes a saved login, or returns ErrNoRow.
func (s *Store) DeleteLogin(ctx context.Context, id string) error {
	return s.deleteOne(ctx, fmt.Errorf("login %q: %w", id, ErrNoRow), `DELETE FROM saved_logins WHERE id = ?`, id)
}

// Package logins keeps saved logins: per origin, a user name and a password, the password
// only in the secrets vault (the OS keyring, else sealed with AES-GCM), the database holding
// the origin, the user name and the name of the vault entry. browser_fill_login fills one into
// a page's form after asking the person; nothing here hands a password to a model, an event
// or a log.
package logins

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/clusterspace/clusterspace/backend/browser"
	"github.com/clusterspace/clusterspace/backend/internal/randid"
	"github.com/clusterspace/clusterspace/backend/store"
)

// ErrNotFound means there is no saved login with that id.
var ErrNotFound = errors.New("no such saved login")

// maxField bounds a user name and a password: far beyond any real one.
const maxField = 1024

// Login is a saved login as every caller sees it: never its password.
type Login struct {
	ID          string    `json:"id"`
	Origin      string    `json:"origin"`
	Username    string    `json:"username"`
	PasswordSet bool      `json:"passwordSet"`
	CreatedAt   time.Time `json:"createdAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
}

// Input adds or edits a login. Password nil keeps the stored one (edit only).
type Input struct {
	Origin   string  `json:"origin"`
	Username string  `json:"username"`
	Password *string `json:"password,omitempty"`
}

// FieldError names the field that is wrong and what to do.
type FieldError struct{ Field, Msg string }

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// Repo is the persistence the service needs; the store implements it.
type Repo interface {
	SavedLogins(ctx context.Context) ([]store.LoginRow, error)
	SaveLogin(ctx context.Context, r store.LoginRow) error
	DeleteLogin(ctx context.Context, id string) error
}

// Vault holds the passwords; *secrets.Vault implements it.
type Vault interface {
	Set(ctx context.Context, name, value string) error
	Get(ctx context.Context, name string) (string, bool, error)
	Delete(ctx context.Context, name string) error
}

// Service manages the saved logins.
type Service struct {
	repo  Repo
	vault Vault
	mu    sync.Mutex
}

// NewService returns the service.
func NewService(repo Repo, vault Vault) *Service { return &Service{repo: repo, vault: vault} }

func secretName(id string) string { return "login/" + id + "/password" }

func (s *Service) view(ctx context.Context, r store.LoginRow) Login {
	_, ok, err := s.vault.Get(ctx, r.SecretName)
	return Login{ID: r.ID, Origin: r.Origin, Username: r.Username, PasswordSet: ok || err != nil, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
}

// List returns the saved logins by origin, without passwords.
func (s *Service) List(ctx context.Context) ([]Login, error) {
	rows, err := s.repo.SavedLogins(ctx)
	if err != nil {
		return nil, err
	}
	out := []Login{}
	for _, r := range rows {
		out = append(out, s.view(ctx, r))
	}
	return out, nil
}

// NormalizeOrigin reads what a person typed as a site (an origin, a full address, or a bare
// host, which means https) as the origin a login is keyed by.
func NormalizeOrigin(in string) (string, error) {
	in = strings.TrimSpace(in)
	if in == "" {
		return "", &FieldError{"origin", "must not be empty: give the site's address, such as https://staging.example.com"}
	}
	raw := in
	if !strings.Contains(raw, "://") {
		raw = "https://" + raw
	}
	o := browser.Origin(raw)
	if o == "" {
		return "", &FieldError{"origin", fmt.Sprintf("%q is not an http or https address: give one such as https://staging.example.com", in)}
	}
	return o, nil
}

// Save adds (id "") or edits a login. A new login needs a password; an edit without one
// keeps the stored password.
func (s *Service) Save(ctx context.Context, id string, in Input) (Login, error) {
	origin, err := NormalizeOrigin(in.Origin)
	if err != nil {
		return Login{}, err
	}
	user := strings.TrimSpace(in.Username)
	switch {
	case user == "":
		return Login{}, &FieldError{"username", "must not be empty: give the user name (or e-mail) this site knows you by"}
	case len(user) > maxField:
		return Login{}, &FieldError{"username", fmt.Sprintf("is longer than %d characters", maxField)}
	case in.Password != nil && *in.Password == "":
		return Login{}, &FieldError{"password", "must not be empty: type the password (leave it out of an edit to keep the saved one)"}
	case in.Password != nil && len(*in.Password) > maxField:
		return Login{}, &FieldError{"password", fmt.Sprintf("is longer than %d characters", maxField)}
	case id == "" && in.Password == nil:
		return Login{}, &FieldError{"password", "is required for a new login"}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rows, err := s.repo.SavedLogins(ctx)
	if err != nil {
		return Login{}, err
	}
	if slices.ContainsFunc(rows, func(r store.LoginRow) bool { return r.ID != id && r.Origin == origin }) {
		return Login{}, &FieldError{"origin", fmt.Sprintf("%s already has a saved login: edit that one (one login per site)", origin)}
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	row := store.LoginRow{ID: id, CreatedAt: now}
	if id == "" {
		row.ID = randid.New("login-")
		row.SecretName = secretName(row.ID)
	} else {
		i := slices.IndexFunc(rows, func(r store.LoginRow) bool { return r.ID == id })
		if i < 0 {
			return Login{}, fmt.Errorf("login %q: %w", id, ErrNotFound)
		}
		row = rows[i]
	}
	row.Origin, row.Username, row.UpdatedAt = origin, user, now
	if in.Password != nil {
		if err := s.vault.Set(ctx, row.SecretName, *in.Password); err != nil {
			return Login{}, fmt.Errorf("could not store the password in the vault: %w", err)
		}
	}
	if err := s.repo.SaveLogin(ctx, row); err != nil {
		return Login{}, err
	}
	return s.view(ctx, row), nil
}

// Delete forgets a login and its password.
func (s *Service) Delete(ctx context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	row, err := s.row(ctx, id)
	if err != nil {
		return err
	}
	if err := s.repo.DeleteLogin(ctx, id); err != nil {
		return err
	}
	return s.vault.Delete(ctx, row.SecretName)
}

func (s *Service) row(ctx context.Context, id string) (store.LoginRow, error) {
	rows, err := s.repo.SavedLogins(ctx)
	if err != nil {
		return store.LoginRow{}, err
	}
	i := slices.IndexFunc(rows, func(r store.LoginRow) bool { return r.ID == id })
	if i < 0 {
		return store.LoginRow{}, fmt.Errorf("login %q: %w", id, ErrNotFound)
	}
	return rows[i], nil
}

// Reveal returns a login's password, for the person who asked to see it in Settings (the
// doors confirm first, and serve asks for its login password). Nothing else calls it.
func (s *Service) Reveal(ctx context.Context, id string) (string, error) {
	return s.secret(ctx, id, "the password of the login for %s is not in the vault any more: edit the login and type it again")
}

// ForOrigin returns the login saved for origin, or false.
func (s *Service) ForOrigin(ctx context.Context, origin string) (Login, bool, error) {
	rows, err := s.repo.SavedLogins(ctx)
	if err != nil {
		return Login{}, false, err
	}
	for _, r := range rows {
		if r.Origin == origin {
			return s.view(ctx, r), true, nil
		}
	}
	return Login{}, false, nil
}

// password reads the password of the login saved for origin: for the fill tool only.
func (s *Service) password(ctx context.Context, l Login) (string, error) {
	return s.secret(ctx, l.ID, "the password for %s is not in the vault any more")
}

// secret reads the password of login id from the vault; when the vault has lost it, the
// error is missing with the login's origin.
func (s *Service) secret(ctx context.Context, id, missing string) (string, error) {
	row, err := s.row(ctx, id)
	if err != nil {
		return "", err
	}
	pw, ok, err := s.vault.Get(ctx, row.SecretName)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", fmt.Errorf(missing, row.Origin)
	}
	return pw, nil
}

package main

import "github.com/clusterspace/clusterspace/backend/logins"

// ListLogins returns the saved logins, never their passwords.
func (a *App) ListLogins() ([]logins.Login, error) { return a.eng.Logins.List(a.ctx) }

// SaveLogin adds (id "") or edits a saved login; password nil keeps the saved one.
func (a *App) SaveLogin(id string, in logins.Input) (logins.Login, error) {
	return a.eng.Logins.Save(a.ctx, id, in)
}

// DeleteLogin forgets a saved login and its password.
func (a *App) DeleteLogin(id string) error { return a.eng.Logins.Delete(a.ctx, id) }

// RevealLogin returns a saved password for Settings → Logins' Reveal, which the window asks
// the person to confirm first; the desktop's person is at the machine that holds the vault.
func (a *App) RevealLogin(id string) (string, error) { return a.eng.Logins.Reveal(a.ctx, id) }

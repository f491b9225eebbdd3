package config

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// The saved providers and SSH servers are named entries with a secret in the vault; these
// are the rules they share.

// checkName refuses an entry's name that is empty or that another entry already uses (names
// are matched without case: they are how a person tells entries apart). selfID is the entry
// being edited ("" when adding); idName reads an entry's id and name; what names the kind of
// entry in the message.
func checkName[E any](name string, all []E, selfID string, idName func(E) (string, string), what string) error {
	if name == "" {
		return &FieldError{"name", "must not be empty"}
	}
	taken := slices.ContainsFunc(all, func(e E) bool {
		id, other := idName(e)
		return id != selfID && strings.EqualFold(other, name)
	})
	if taken {
		return &FieldError{"name", fmt.Sprintf("%q is already used by another %s; pick another name", name, what)}
	}
	return nil
}

// putSecret applies an edit's secret to the vault entry name: nil keeps the stored one, ""
// removes it, anything else replaces it. what names the secret in the error.
func putSecret(ctx context.Context, vault Vault, name string, secret *string, what string) error {
	switch {
	case secret == nil:
		return nil
	case *secret == "":
		return vault.Delete(ctx, name)
	}
	if err := vault.Set(ctx, name, *secret); err != nil {
		return fmt.Errorf("could not store the %s: %w", what, err)
	}
	return nil
}

// Package secretstest opens a real store and its secrets vault for the tests of the services
// that keep secrets (providers, SSH servers, saved logins), so none copies the opening.
package secretstest

import (
	"context"
	"testing"

	"github.com/clusterspace/clusterspace/backend/secrets"
	"github.com/clusterspace/clusterspace/backend/store"
	"github.com/clusterspace/clusterspace/backend/store/storetest"
)

// Open opens a store in a fresh directory and the vault beside it, sealed in a file and never
// in the keyring: a test must not write to the person's keyring. The store closes when the
// test ends.
func Open(tb testing.TB) (*store.Store, *secrets.Vault) {
	tb.Helper()
	st, dir := storetest.Open(tb)
	vault, err := secrets.Open(context.Background(), dir, st, secrets.Options{NoKeyring: true})
	if err != nil {
		tb.Fatal(err)
	}
	return st, vault
}

// Package storetest opens real SQLite stores for the tests of the packages that keep their
// state in one, so each does not copy the opening and closing.
package storetest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/clusterspace/clusterspace/backend/store"
)

// Open opens a new store in a fresh directory, closed when the test ends, and returns the
// directory too: a vault or a sandbox may go beside it.
func Open(tb testing.TB) (*store.Store, string) {
	tb.Helper()
	dir := tb.TempDir()
	return OpenIn(tb, dir), dir
}

// OpenIn opens the store of dir (store.FileName in it), closed when the test ends.
func OpenIn(tb testing.TB, dir string) *store.Store {
	tb.Helper()
	st, err := store.Open(context.Background(), filepath.Join(dir, store.FileName))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	return st
}

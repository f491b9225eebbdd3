package store

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/workspace"
)

func openTemp(t testing.TB) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), FileName)
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

func TestMigratesFromEmpty(t *testing.T) {
	t.Parallel()
	s, path := openTemp(t)
	ctx := context.Background()
	v, err := s.Version(ctx)
	if err != nil || v != SchemaVersion() || v < 1 {
		t.Fatalf("version %d (%v), want %d", v, err, SchemaVersion())
	}
	var mode string
	s.db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode)
	if mode != "wal" {
		t.Fatalf("journal_mode %q, want wal", mode)
	}
	var fk int
	s.db.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&fk)
	if fk != 1 {
		t.Fatal("foreign keys are off")
	}
	for _, table := range []string{"settings", "workspaces", "panes"} {
		var n int
		if err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE type='table' AND name=?", table).Scan(&n); err != nil || n != 1 {
			t.Fatalf("table %s missing", table)
		}
	}
	// Opening again is a no-op migration that keeps the data.
	if err := s.SetSetting(ctx, "k", "v"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s2, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if v, ok, _ := s2.Setting(ctx, "k"); !ok || v != "v" {
		t.Fatalf("setting after reopen: %q %v", v, ok)
	}
}

// snapshot returns the file's bytes and lists the files in its dir, to prove nothing changed.
func snapshot(t *testing.T, path string) ([]byte, []string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return b, names
}

func assertUntouched(t *testing.T, path string, before []byte, beforeNames []string) {
	t.Helper()
	after, names := snapshot(t, path)
	if !bytes.Equal(before, after) {
		t.Fatal("the refused database file was modified")
	}
	if strings.Join(names, ",") != strings.Join(beforeNames, ",") {
		t.Fatalf("files in the data dir changed: %v -> %v", beforeNames, names)
	}
}

func TestRefusesNewerSchema(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), FileName)
	db, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	newer := SchemaVersion() + 5
	if _, err := db.Exec("CREATE TABLE future(x); PRAGMA user_version = " + itoa(newer)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	before, names := snapshot(t, path)

	_, err = Open(context.Background(), path)
	if !errors.Is(err, ErrNewerSchema) {
		t.Fatalf("got %v, want ErrNewerSchema", err)
	}
	for _, want := range []string{itoa(newer), "newer ClusterSpace", "untouched"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q does not mention %q", err, want)
		}
	}
	assertUntouched(t, path, before, names)
}

func TestRefusesGarbageFileWithoutTouchingIt(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), FileName)
	garbage := bytes.Repeat([]byte("this is not a database\n"), 500)
	if err := os.WriteFile(path, garbage, 0o600); err != nil {
		t.Fatal(err)
	}
	assertRefusedUntouched(t, path)
}

// assertRefusedUntouched opens path, which must fail with ErrCorrupt telling what to do,
// and leave every file of the database as it was.
func assertRefusedUntouched(t *testing.T, path string) {
	t.Helper()
	before, names := snapshot(t, path)
	_, err := Open(context.Background(), path)
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "move it aside") {
		t.Fatalf("got %v, want ErrCorrupt telling what to do", err)
	}
	assertUntouched(t, path, before, names)
}

func TestRefusesDamagedPagesWithoutTouchingThem(t *testing.T) {
	t.Parallel()
	s, path := openTemp(t)
	ctx := context.Background()
	// Enough rows to span many pages, then a checkpoint so everything is in the main file.
	for i := range 300 {
		if err := s.SetSetting(ctx, "key-"+itoa(i), strings.Repeat("v", 200)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.db.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	os.Remove(path + "-wal")
	os.Remove(path + "-shm")

	b, _ := os.ReadFile(path)
	if len(b) < 4*4096 {
		t.Fatalf("database only %d bytes; test needs several pages", len(b))
	}
	// Keep the header page intact; scribble over the rest.
	for i := 4096 + 100; i < len(b); i += 7 {
		b[i] ^= 0x5a
	}
	os.WriteFile(path, b, 0o600)
	assertRefusedUntouched(t, path)
}

func TestWorkspaceRoundTripAndCascade(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	ws := workspace.Workspace{ID: "ws-a", Name: "A", Rows: 1, Cols: 2, RowWeights: []float64{1}, ColWeights: []float64{2, 1},
		Panes: []workspace.Pane{
			{ID: "p1", Kind: workspace.KindTerminal, Label: "one", Row: 0, Col: 0},
			{ID: "p2", Kind: workspace.KindBrowser, Label: "two", Row: 0, Col: 1},
		}, CreatedAt: now, UpdatedAt: now}
	if err := s.SaveWorkspace(ctx, ws); err != nil {
		t.Fatal(err)
	}
	got, err := s.Workspace(ctx, "ws-a")
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "A" || len(got.Panes) != 2 || got.Panes[1].Kind != workspace.KindBrowser || got.ColWeights[0] != 2 || !got.CreatedAt.Equal(now) {
		t.Fatalf("round trip: %+v", got)
	}
	// Saving again replaces the panes rather than adding to them.
	ws.Panes = ws.Panes[:1]
	ws.Cols, ws.ColWeights = 1, []float64{1}
	if err := s.SaveWorkspace(ctx, ws); err != nil {
		t.Fatal(err)
	}
	list, _ := s.ListWorkspaces(ctx)
	if len(list) != 1 || len(list[0].Panes) != 1 {
		t.Fatalf("after replace: %+v", list)
	}
	if err := s.DeleteWorkspace(ctx, "ws-a"); err != nil {
		t.Fatal(err)
	}
	var n int
	s.db.QueryRow("SELECT count(*) FROM panes").Scan(&n)
	if n != 0 {
		t.Fatalf("%d panes left after deleting their workspace", n)
	}
	if _, err := s.Workspace(ctx, "ws-a"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("got %v, want ErrNotFound", err)
	}
	if err := s.DeleteWorkspace(ctx, "ws-a"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("delete twice: %v", err)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

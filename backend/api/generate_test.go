package api

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/clusterspace/clusterspace/backend/api/apigen"
)

var update = flag.Bool("update", false, "rewrite the generated TypeScript and the golden JSON")

// genDir is where the frontend reads the generated wire types.
var genDir = filepath.Join("..", "..", "frontend", "src", "lib", "api", "gen")

// TestGeneratedFiles fails when the TypeScript generated from the call table and the Go types
// it carries is not what the Go code says now: a field renamed, added or removed in Go without
// regenerating. Regenerate with -update.
func TestGeneratedFiles(t *testing.T) {
	tmp := t.TempDir()
	if err := apigen.Generate(New(Services{}), tmp); err != nil {
		t.Fatal(err)
	}
	if *update {
		os.RemoveAll(genDir)
		if err := apigen.Generate(New(Services{}), genDir); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, _ := filepath.Glob(filepath.Join(tmp, "*.ts"))
	have, _ := filepath.Glob(filepath.Join(genDir, "*.ts"))
	if len(want) != len(have) {
		t.Errorf("%s holds %d generated files, the Go code makes %d: run go test ./backend/api -run TestGeneratedFiles -update", genDir, len(have), len(want))
	}
	for _, w := range want {
		name := filepath.Base(w)
		a, _ := os.ReadFile(w)
		b, err := os.ReadFile(filepath.Join(genDir, name))
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("%s is stale: the Go types changed since it was generated; run go test ./backend/api -run TestGeneratedFiles -update", filepath.Join(genDir, name))
		}
	}
}

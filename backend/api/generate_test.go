package api

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode"

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

// TestOneJSONCasing walks every type the calls carry, arguments and results: each JSON name is
// camelCase, so the UI never meets pane_id beside goalId. (A tool's own arguments, inside a
// step or an approval, travel as the model sent them: they are data, not the wire's names.)
func TestOneJSONCasing(t *testing.T) {
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type, path string)
	var bad []string
	walk = func(typ reflect.Type, path string) {
		if seen[typ] {
			return
		}
		seen[typ] = true
		switch typ.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
			walk(typ.Elem(), path)
		case reflect.Struct:
			for i := range typ.NumField() {
				f := typ.Field(i)
				name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
				if !f.IsExported() || name == "-" {
					continue
				}
				if name != "" && (strings.ContainsAny(name, "_-") || unicode.IsUpper(rune(name[0]))) {
					bad = append(bad, fmt.Sprintf("%s.%s %q (in %s)", typ, f.Name, name, path))
				}
				walk(f.Type, path)
			}
		}
	}
	for _, m := range New(Services{}).Methods() {
		walk(m.Args, m.Name+" arguments")
		if m.HasResult() {
			walk(m.Result, m.Name+" result")
		}
	}
	for _, b := range bad {
		t.Errorf("not camelCase: %s", b)
	}
}

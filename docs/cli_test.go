package docs

import (
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/cli"
)

var update = flag.Bool("update", false, "rewrite docs/cli.md from the commands' own help")

// TestCLIReference: docs/cli.md is what the commands print for --help, byte for byte.
func TestCLIReference(t *testing.T) {
	want, err := cli.Reference()
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile("cli.md", []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile("cli.md")
	if err != nil {
		t.Fatalf("docs/cli.md cannot be read (%v): make it with `make docs`", err)
	}
	if string(got) != want {
		g, w := strings.Split(string(got), "\n"), strings.Split(want, "\n")
		i := 0
		for i < len(g) && i < len(w) && g[i] == w[i] {
			i++
		}
		line := func(l []string) string {
			if i < len(l) {
				return l[i]
			}
			return "(end of file)"
		}
		t.Fatalf("docs/cli.md is stale: from line %d it differs from the commands' own help\n  file: %s\n  help: %s\n"+
			"Regenerate it with `make docs` (go test ./docs -run TestCLIReference -update); the help texts live in backend/cli/help.go.",
			i+1, line(g), line(w))
	}
}

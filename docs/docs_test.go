package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// MaxReadmeLines is how long the README may grow: what it is, the two commands, install, a
// screenshot and where to read on; everything else belongs in docs/.
const MaxReadmeLines = 250

// TestReadmeIsShortAndPointsOnward: the README stays under its limit, keeps the two commands
// at the top, and links every file of docs/.
func TestReadmeIsShortAndPointsOnward(t *testing.T) {
	data, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	if n := strings.Count(readme, "\n"); n > MaxReadmeLines {
		t.Errorf("README.md has %d lines, over its limit of %d: move the detail into docs/ and link it", n, MaxReadmeLines)
	}
	first := strings.Index(readme, "\n## ")
	if first < 0 || !strings.HasPrefix(readme[first:], "\n## The two commands") ||
		!strings.Contains(readme, "make run") || !strings.Contains(readme, "make test") {
		t.Error(`README.md's first section must be "The two commands" (make run, make test)`)
	}
	docs, _ := filepath.Glob("*.md")
	if len(docs) < 8 {
		t.Fatalf("found %d files in docs/; want the manual, the references, security, architecture, measurements, testing and the index", len(docs))
	}
	for _, d := range docs {
		if !strings.Contains(readme, "](docs/"+d+")") {
			t.Errorf("README.md does not link docs/%s", d)
		}
	}
}

// TestDocsLinksResolve: every relative link in the README and in docs/*.md names a file that
// exists, and its #anchor, if any, a heading of that file.
func TestDocsLinksResolve(t *testing.T) {
	files, _ := filepath.Glob("*.md")
	files = append(files, "../README.md")
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := stripCode(string(data))
		for _, m := range link.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			resolved := f
			if path != "" {
				resolved = filepath.Join(filepath.Dir(f), path)
				if _, err := os.Stat(resolved); err != nil {
					t.Errorf("%s links %s, which does not exist", f, target)
					continue
				}
			}
			if anchor != "" && strings.HasSuffix(resolved, ".md") && !hasAnchor(t, resolved, anchor) {
				t.Errorf("%s links %s: %s has no heading with that anchor", f, target, resolved)
			}
		}
	}
}

// stripCode drops fenced code blocks, whose brackets are no links.
func stripCode(s string) string {
	return regexp.MustCompile("(?s)```.*?```").ReplaceAllString(s, "")
}

// hasAnchor reports whether a heading of the file makes the anchor as GitHub makes them:
// lower case, punctuation dropped, spaces as hyphens.
func hasAnchor(t *testing.T, file, anchor string) bool {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	drop := regexp.MustCompile(`[^\p{L}\p{N} _-]`)
	for _, l := range strings.Split(stripCode(string(data)), "\n") {
		h := strings.TrimLeft(l, "#")
		if len(h) == len(l) || !strings.HasPrefix(h, " ") {
			continue
		}
		slug := strings.ReplaceAll(drop.ReplaceAllString(strings.ToLower(strings.TrimSpace(h)), ""), " ", "-")
		if slug == anchor {
			return true
		}
	}
	return false
}

// TestArchitectureListsEveryPackage: the map of the tree in docs/architecture.md names every
// Go package under backend/ and scripts/, so a new package cannot go unexplained.
func TestArchitectureListsEveryPackage(t *testing.T) {
	data, err := os.ReadFile("architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	packages := map[string]bool{}
	for _, root := range []string{"../backend", "../scripts"} {
		err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.Type().IsRegular() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
				packages[strings.TrimPrefix(filepath.Dir(path), "../")] = true
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(packages) < 20 {
		t.Fatalf("found %d packages under backend/ and scripts/", len(packages))
	}
	for p := range packages {
		if !strings.Contains(doc, "`"+p+"`") {
			t.Errorf("docs/architecture.md's map of the tree does not name %s: add a row (or a mention in its parent's row) saying what it is", p)
		}
	}
}

// TestManualListsEveryShortcut: every key binding of the frontend's keymap is in the manual's
// table of keyboard shortcuts.
func TestManualListsEveryShortcut(t *testing.T) {
	keymap, err := os.ReadFile("../frontend/src/lib/state/keymap.ts")
	if err != nil {
		t.Fatal(err)
	}
	manual, err := os.ReadFile("manual.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(manual), "\n## Keyboard shortcuts\n")
	if !ok {
		t.Fatal(`docs/manual.md has no "## Keyboard shortcuts" section`)
	}
	keys := regexp.MustCompile(`keys: ['"`+"`"+`]([^'"`+"`"+`]+)['"`+"`"+`]`).FindAllStringSubmatch(string(keymap), -1)
	if len(keys) < 10 {
		t.Fatalf("found %d key bindings in keymap.ts", len(keys))
	}
	for _, k := range keys {
		key := k[1]
		if strings.Contains(key, "${") { // the numbered workspaces, Ctrl+1 … Ctrl+9
			key = "Ctrl+1"
		}
		if !strings.Contains(table, "`"+key+"`") {
			t.Errorf("docs/manual.md's keyboard shortcuts lack %s (bound in frontend/src/lib/state/keymap.ts)", key)
		}
	}
}

// MaxSourceLines is the longest a source file may be (the project's style): a longer one is
// doing two things.
const MaxSourceLines = 600

// TestNoSourceFileIsOverItsLimit: no Go, TypeScript, Svelte, CSS or shell file of the tree
// is over MaxSourceLines (what the build makes and what npm installs are not the tree's).
func TestNoSourceFileIsOverItsLimit(t *testing.T) {
	skip := map[string]bool{".git": true, "node_modules": true, "dist": true, "build": true, "test-artifacts": true, "testdata": true}
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if skip[d.Name()] {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(path) {
		case ".go", ".ts", ".svelte", ".css", ".sh":
		default:
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if n := strings.Count(string(data), "\n"); n > MaxSourceLines {
			t.Errorf("%s has %d lines, over the limit of %d: split it by what its parts do", path, n, MaxSourceLines)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

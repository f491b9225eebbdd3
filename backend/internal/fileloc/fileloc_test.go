package fileloc

import "testing"

func TestString(t *testing.T) {
	for _, c := range []struct {
		file  string
		line  int
		field string
		want  string
	}{
		{"mcp.json", 0, "", "mcp.json"},
		{"personas/a.md", 3, "", "personas/a.md:3"},
		{"tools/x.js", 0, "name", "tools/x.js: name"},
		{"tasks/t.md", 12, "criterion", "tasks/t.md:12: criterion"},
	} {
		if got := String(c.file, c.line, c.field); got != c.want {
			t.Errorf("String(%q, %d, %q) = %q, want %q", c.file, c.line, c.field, got, c.want)
		}
	}
}

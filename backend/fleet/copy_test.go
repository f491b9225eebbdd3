package fleet_test

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/fleet"
)

// `copy:` reads as a list of clean paths, writes back the same (Format, then Parse), and a
// bad entry is refused naming the field and the entry's own line.
func TestCopyParsesWritesBackAndRefusesBadEntries(t *testing.T) {
	in := "name: c\nisolation: worktree\nsetup: npm ci\ncopy:\n  - .env\n  - ./config/local.yaml\n  - fixtures/\ntasks:\n  - {id: a, goal: A}\n"
	f, err := fleet.Parse([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(f.Copy, []string{".env", "config/local.yaml", "fixtures"}) {
		t.Fatalf("copy: %q", f.Copy)
	}
	out, err := fleet.Format(f)
	if err != nil {
		t.Fatal(err)
	}
	back, err := fleet.Parse(out)
	if err != nil || !reflect.DeepEqual(back, f) {
		t.Fatalf("read back (%v):\n%s\ngot  %+v\nwant %+v", err, out, back, f)
	}
	if !strings.Contains(string(out), "copy:\n  - .env\n") {
		t.Errorf("copy: is not written as a list:\n%s", out)
	}

	head := "name: c\nisolation: worktree\ncopy:\n  - .env\n"
	for _, c := range []struct {
		entries string
		line    int
		want    string
	}{
		{"  - /etc/passwd\n", 5, "absolute"},
		{"  - ../secrets/.env\n", 5, "leaves the repository"},
		{"  - ok.txt\n  - a/../../b\n", 6, "leaves the repository"},
		{"  - \"\"\n", 5, "empty"},
		{"  -\n", 5, "empty"},
		{"  - \"a\\x01b\"\n", 5, "control character"},
		{"  - .git/config\n", 5, "inside .git"},
		{"  - ./.env\n", 5, "listed twice"},
	} {
		_, err := fleet.Parse([]byte(head + c.entries + "tasks:\n  - {id: a, goal: A}\n"))
		var fe *fleet.FieldError
		if !errors.As(err, &fe) || fe.Field != "copy" || fe.Line != c.line || !strings.Contains(fe.Msg, c.want) {
			t.Errorf("copy entries %q: %v (line %d), want field copy, line %d, %q", c.entries, err, feLine(fe), c.line, c.want)
		}
	}
	for _, c := range []struct{ file, want string }{
		{"name: c\ncopy: .env\ntasks:\n  - {id: a, goal: A, isolation: worktree}\n", "is a list"},
		{"name: c\ncopy: []\ntasks:\n  - {id: a, goal: A, isolation: worktree}\n", "is empty"},
		{"name: c\ncopy: [.env]\ntasks:\n  - {id: a, goal: A}\n", "no task has isolation: worktree"},
	} {
		_, err := fleet.Parse([]byte(c.file))
		var fe *fleet.FieldError
		if !errors.As(err, &fe) || fe.Field != "copy" || fe.Line != 2 || !strings.Contains(fe.Msg, c.want) {
			t.Errorf("%q: %v, want field copy on line 2, %q", c.file, err, c.want)
		}
	}
	// One isolated task is enough.
	if _, err := fleet.Parse([]byte("name: c\ncopy: [.env]\ntasks:\n  - {id: a, goal: A, isolation: worktree}\n")); err != nil {
		t.Errorf("copy with one isolated task: %v", err)
	}
}

func feLine(fe *fleet.FieldError) int {
	if fe == nil {
		return -1
	}
	return fe.Line
}

package fleet

import (
	"errors"
	"strings"
	"testing"
)

// A fleet file's land: is read, written back as it was, and refused naming its field and
// line when it is not a mapping of check and strategy.
func TestFleetFileLandKey(t *testing.T) {
	const head = "name: l\nisolation: worktree\n"
	const tasks = "tasks:\n  - {id: a, goal: Write a}\n"
	f, err := Parse([]byte(head + "land: {check: \"make test\", strategy: merge}\n" + tasks))
	if err != nil || f.Land == nil || f.Land.Check != "make test" || f.Land.Strategy != "merge" {
		t.Fatalf("land: %+v, %v", f.Land, err)
	}
	text, err := Format(f)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Parse(text)
	if err != nil || again.Land == nil || *again.Land != *f.Land {
		t.Fatalf("written back as\n%s\nread again as %+v, %v", text, again.Land, err)
	}
	for _, c := range []struct{ land, field, want string }{
		{"land: make test", "land", "is a mapping"},
		{"land: {strategy: squash}", "land.strategy", "use rebase"},
		{"land: {check: \"if then\"}", "land.check", "bash cannot parse"},
		{"land: {check: make, when: always}", "land.when", "land has check and strategy"},
	} {
		_, err := Parse([]byte(head + c.land + "\n" + tasks))
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != c.field || !strings.Contains(fe.Msg, c.want) || fe.Line != 3 {
			t.Errorf("%s: %v (want field %s on line 3, saying %q)", c.land, err, c.field, c.want)
		}
	}
}

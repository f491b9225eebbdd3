package randid

import (
	"regexp"
	"testing"
)

func TestNewIsThePrefixAndTwelveHexCharacters(t *testing.T) {
	t.Parallel()
	shape := regexp.MustCompile(`^ssh-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for range 100 {
		id := New("ssh-")
		if !shape.MatchString(id) {
			t.Fatalf("id %q is not ssh- and 12 hex characters", id)
		}
		if seen[id] {
			t.Fatalf("id %q came twice in 100", id)
		}
		seen[id] = true
	}
}

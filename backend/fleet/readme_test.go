package fleet_test

import (
	"os"
	"regexp"
	"testing"

	"github.com/clusterspace/clusterspace/backend/fleet"
)

// Every fleet file docs/fleet-file.md shows is one Parse takes.
func TestFleetFileDocExamplesParse(t *testing.T) {
	readme, err := os.ReadFile("../../docs/fleet-file.md")
	if err != nil {
		t.Fatal(err)
	}
	examples := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(string(readme), -1)
	if len(examples) < 3 {
		t.Fatalf("found %d YAML examples in docs/fleet-file.md", len(examples))
	}
	for _, m := range examples {
		if _, err := fleet.Parse([]byte(m[1])); err != nil {
			t.Errorf("%v in:\n%s", err, m[1])
		}
	}
}

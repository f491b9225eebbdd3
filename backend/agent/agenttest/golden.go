// Package agenttest helps tests of what runs on the turn engine (goals, chat) compare a whole
// story of events with a golden file.
package agenttest

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// Lines renders events one per line as canonical JSON (sorted keys), with every key named in
// drop left out at any depth: ids and clocks that change from run to run.
func Lines(t *testing.T, events []any, drop ...string) []byte {
	t.Helper()
	skip := map[string]bool{}
	for _, k := range drop {
		skip[k] = true
	}
	var out bytes.Buffer
	for _, e := range events {
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		b, _ = json.Marshal(without(v, skip)) // maps marshal with sorted keys
		out.Write(b)
		out.WriteByte('\n')
	}
	return out.Bytes()
}

func without(v any, skip map[string]bool) any {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if skip[k] {
				delete(x, k)
			} else {
				x[k] = without(val, skip)
			}
		}
	case []any:
		for i := range x {
			x[i] = without(x[i], skip)
		}
	}
	return v
}

// Golden compares got with the file at path, or rewrites the file when the test runs with
// -update (for a change that is meant; review its diff).
func Golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to write it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("the events differ from %s (run with -update if the change is meant):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

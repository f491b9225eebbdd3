// Package wiretest is for the tests of the protocol packages' stream readers: stream items
// written as JSON, fed through a reader as the stream would feed them.
package wiretest

import (
	"encoding/json"
	"testing"

	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/llm/internal/wire"
)

// Replay feeds items, each the JSON of one SDK stream item, to read as the stream would, and
// returns the reply turn makes of them; an item that is not one, or a reply that fails, fails
// the test.
func Replay[T any](t testing.TB, turn *wire.Turn, read func(T), items ...string) llm.Reply {
	t.Helper()
	for _, item := range items {
		var v T
		if err := json.Unmarshal([]byte(item), &v); err != nil {
			t.Fatalf("stream item %s: %v", item, err)
		}
		read(v)
	}
	turn.Close()
	reply, err := llm.Collect(llm.EventStream(llm.StreamInfo{}, turn.Events()), nil)
	if err != nil {
		t.Fatal(err)
	}
	return reply
}

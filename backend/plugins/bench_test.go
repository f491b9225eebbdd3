package plugins

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/clusterspace/clusterspace/backend/tools"
)

// BenchmarkPluginCall is one call of a small plugin: a fresh runtime, the file run, the
// arguments checked and the result turned to JSON.
func BenchmarkPluginCall(b *testing.B) {
	cfg := b.TempDir()
	writePlugin(b, cfg, "word_count.js", wordCount)
	s := New(cfg, builtin, Options{})
	tl := s.Tools()[0]
	call := tools.Call{ID: "c", Name: "word_count", Args: json.RawMessage(`{"text":"one two three four"}`)}
	for b.Loop() {
		if res, err := tl.Run(context.Background(), call); err != nil || res.IsError {
			b.Fatal(err, res.Text)
		}
	}
}

package engine

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

// The setup the engine's tests share.

// openEngine opens an engine on dataDir that logs nowhere (a WithLogger in opts wins),
// failing the test if it cannot. The caller closes it, when its own cleanup order needs.
func openEngine(t testing.TB, dataDir string, opts ...Option) *Engine {
	t.Helper()
	eng, err := Open(context.Background(), dataDir, append([]Option{WithLogger(slog.New(slog.DiscardHandler))}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return eng
}

// scriptedConfig is the provider config of the scripted server srv.
func scriptedConfig(srv *llmtest.Server) llm.Config {
	return llm.Config{Name: "scripted", Kind: "openai", BaseURL: srv.OpenAIURL(), Model: "scripted", MaxRetries: -1}
}

// withScripted answers every model reference, the critic's too, with the server cfg names.
func withScripted(cfg llm.Config) Option {
	return WithModels(func(goal.Models) goal.Models { return scriptedModels{cfg} })
}

// markerTemplate writes the pane template "marker" into configDir's templates/: a terminal
// whose command writes "ran" into the file it returns, in dir, then waits.
func markerTemplate(configDir, dir string) string {
	marker := filepath.Join(dir, "ran")
	os.MkdirAll(filepath.Join(configDir, "templates"), 0o755)
	os.WriteFile(filepath.Join(configDir, "templates", "marker.yaml"),
		[]byte("name: Marker\ncommand: sh\nargs: [-c, \"echo ran > "+marker+"; exec sleep 60\"]\n"), 0o644)
	return marker
}

package engine

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
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

// markerTemplate writes the pane template "marker" into configDir's templates/: a terminal
// whose command writes "ran" into the file it returns, in dir, then waits.
func markerTemplate(configDir, dir string) string {
	marker := filepath.Join(dir, "ran")
	os.MkdirAll(filepath.Join(configDir, "templates"), 0o755)
	os.WriteFile(filepath.Join(configDir, "templates", "marker.yaml"),
		[]byte("name: Marker\ncommand: sh\nargs: [-c, \"echo ran > "+marker+"; exec sleep 60\"]\n"), 0o644)
	return marker
}

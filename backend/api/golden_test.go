package api

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/clusterspace/clusterspace/backend/engine"
	"github.com/clusterspace/clusterspace/backend/rpc"
)

// goldenDir holds the JSON of real answers of the table, which the frontend's tests read instead
// of hand-written fixtures (src/lib/api/table.test.ts).
var goldenDir = filepath.Join("..", "..", "frontend", "src", "lib", "api", "testdata")

// unstableValue is a value that differs from run to run, and the placeholder it is held as.
type unstableValue struct {
	re   *regexp.Regexp
	with string
}

// Ids, times, paths and process numbers differ from run to run; the golden files hold them as
// placeholders of the same JSON type.
var unstable = []unstableValue{
	{regexp.MustCompile(`"(ws|pane|prov|tab|ssh)-[0-9a-f]{6,}"`), `"$1-0"`},
	{regexp.MustCompile(`"\d{4}-\d\d-\d\dT[0-9:.]+(Z|[+-]\d\d:\d\d)"`), `"2026-01-01T00:00:00Z"`},
	{regexp.MustCompile(`"pid":\s*\d+`), `"pid": 1`},
	{regexp.MustCompile(`"title":\s*"[^"]*"`), `"title": "bash"`},
	{regexp.MustCompile(`"installed":\s*(true|false)`), `"installed": true`},
}

// goldenEngine is a real engine (a store, a PTY) and the table of calls over all its services,
// as the desktop window has it, for the golden tests.
type goldenEngine struct {
	t     *testing.T
	eng   *engine.Engine
	table *rpc.Table
}

func newGoldenEngine(t *testing.T, opts ...engine.Option) *goldenEngine {
	t.Helper()
	opts = append([]engine.Option{engine.WithLogger(slog.New(slog.DiscardHandler)), engine.WithConfigDir(t.TempDir())}, opts...)
	eng, err := engine.Open(context.Background(), t.TempDir(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	s := ForEngine(eng, "test")
	// The golden files hold the config dir as this placeholder, not a temporary dir.
	s.ConfigDir = "/config"
	return &goldenEngine{t: t, eng: eng, table: New(s)}
}

// call runs one call of the table and answers its result; a refusal fails the test.
func (g *goldenEngine) call(name, args string) json.RawMessage {
	g.t.Helper()
	res, err := g.table.Call(context.Background(), name, json.RawMessage(args))
	if err != nil {
		g.t.Fatalf("%s %s: %v", name, args, err)
	}
	return res
}

// goldenWorkspaces is ListWorkspaces' answer, as far as the golden tests read it.
type goldenWorkspaces struct {
	ActiveID   string `json:"activeId"`
	Workspaces []struct {
		ID    string `json:"id"`
		Panes []struct {
			ID string `json:"id"`
		} `json:"panes"`
	} `json:"workspaces"`
}

// workspaces answers ListWorkspaces, raw and read.
func (g *goldenEngine) workspaces() (json.RawMessage, goldenWorkspaces) {
	g.t.Helper()
	raw := g.call("ListWorkspaces", `{}`)
	var l goldenWorkspaces
	if err := json.Unmarshal(raw, &l); err != nil || len(l.Workspaces) == 0 {
		g.t.Fatalf("ListWorkspaces answered no workspace (%v): %s", err, raw)
	}
	return raw, l
}

// TestGoldenAnswers runs calls of the table on a real engine (a store, a PTY) and compares
// their answers with the golden JSON the frontend tests read: a change of a result's shape in
// Go shows here, and -update hands the new shape to the frontend's tests.
func TestGoldenAnswers(t *testing.T) {
	g := newGoldenEngine(t)
	list, l := g.workspaces()
	pane := l.Workspaces[0].Panes[0].ID
	answers := map[string]json.RawMessage{
		"ListWorkspaces":  list,
		"SaveProvider":    g.call("SaveProvider", `{"id": "", "input": {"name": "Local", "kind": "openai", "baseUrl": "http://127.0.0.1:1/v1", "model": "m", "visionModel": "", "temperature": null, "maxTokens": 0, "thinking": false, "contextWindow": 0}}`),
		"ListProviders":   g.call("ListProviders", `{}`),
		"Prices":          g.call("Prices", `{}`),
		"GoalSettings":    g.call("GoalSettings", `{}`),
		"LaunchTemplates": g.call("LaunchTemplates", `{}`),
		"ListSSHServers":  g.call("ListSSHServers", `{}`),
		"TerminalOpen":    g.call("TerminalOpen", `{"paneId": "`+pane+`", "cols": 80, "rows": 24}`),
	}
	checkGolden(t, answers)
}

// checkGolden compares the answers with their golden files (or writes them, with -update),
// holding unstable values as placeholders; more replaces more of them.
func checkGolden(t *testing.T, answers map[string]json.RawMessage, more ...unstableValue) {
	t.Helper()
	for name, raw := range answers {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		pretty, _ := json.MarshalIndent(v, "", "  ")
		for _, u := range append(unstable[:len(unstable):len(unstable)], more...) {
			pretty = u.re.ReplaceAll(pretty, []byte(u.with))
		}
		pretty = append(pretty, '\n')
		path := filepath.Join(goldenDir, name+".json")
		if *update {
			os.MkdirAll(goldenDir, 0o755)
			if err := os.WriteFile(path, pretty, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		have, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(have, pretty) {
			t.Errorf("%s: the answer's shape differs from %s; run go test ./backend/api -update and let the frontend tests check the new shape:\n%s", name, path, pretty)
		}
	}
}

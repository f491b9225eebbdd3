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

// TestGoldenAnswers runs calls of the table on a real engine (a store, a PTY) and compares
// their answers with the golden JSON the frontend tests read: a change of a result's shape in
// Go shows here, and -update hands the new shape to the frontend's tests.
func TestGoldenAnswers(t *testing.T) {
	ctx := context.Background()
	eng, err := engine.Open(ctx, t.TempDir(), engine.WithLogger(slog.New(slog.DiscardHandler)), engine.WithConfigDir(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	table := New(Services{Version: "test", Workspaces: eng.Workspaces, Providers: eng.Providers, Terminals: eng.Terminals,
		Browsers: eng.Browsers, Panes: eng.Panes, Goals: eng.Goals, Chat: eng.Chat, SSH: eng.SSH, Settings: eng.Store})
	call := func(name, args string) json.RawMessage {
		t.Helper()
		res, err := table.Call(ctx, name, json.RawMessage(args))
		if err != nil {
			t.Fatalf("%s %s: %v", name, args, err)
		}
		return res
	}
	list := call("ListWorkspaces", `{}`)
	var l struct {
		Workspaces []struct {
			ID    string `json:"id"`
			Panes []struct {
				ID string `json:"id"`
			} `json:"panes"`
		} `json:"workspaces"`
	}
	json.Unmarshal(list, &l)
	pane := l.Workspaces[0].Panes[0].ID
	answers := map[string]json.RawMessage{
		"ListWorkspaces":  list,
		"SaveProvider":    call("SaveProvider", `{"id": "", "input": {"name": "Local", "kind": "openai", "baseUrl": "http://127.0.0.1:1/v1", "model": "m", "visionModel": "", "temperature": null, "maxTokens": 0, "thinking": false, "contextWindow": 0}}`),
		"ListProviders":   call("ListProviders", `{}`),
		"Prices":          call("Prices", `{}`),
		"GoalSettings":    call("GoalSettings", `{}`),
		"LaunchTemplates": call("LaunchTemplates", `{}`),
		"ListSSHServers":  call("ListSSHServers", `{}`),
		"TerminalOpen":    call("TerminalOpen", `{"paneId": "`+pane+`", "cols": 80, "rows": 24}`),
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

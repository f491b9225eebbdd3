package main

import (
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/cli"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

// Client mistakes against the real `serve` get a 4xx that says what is wrong, never a 5xx:
// empty chat messages, chatting with no provider set up, bodies that are `null` or carry
// trailing data, bad limits, and no directory listing of the built UI.
func TestServeAnswersClientMistakesWith4xx(t *testing.T) {
	srv := startServe(t, t.TempDir(), e2ePassword)
	token := apiToken(t, srv.URL)
	var list struct {
		ActiveID   string `json:"activeId"`
		Workspaces []struct {
			Panes []struct{ ID string } `json:"panes"`
		} `json:"workspaces"`
	}
	apiCall(t, "GET", srv.URL+"/api/workspaces", token, nil, &list)
	ws, pane := list.ActiveID, list.Workspaces[0].Panes[0].ID
	goal := func(settings string) string {
		return `{"paneId":"` + pane + `","goal":"x","criterion":{"kind":"manual"},"settings":` + settings + `}`
	}
	cases := []struct {
		name, method, path, body string
		status                   int
		says                     string
	}{
		{"empty chat message", "POST", "/api/workspaces/" + ws + "/chat/messages", `{"text":"  "}`, 400, "the message is empty"},
		{"chat with no provider", "POST", "/api/workspaces/" + ws + "/chat/messages", `{"text":"hello"}`, 409, "no model provider is set up"},
		{"chat resume with no provider", "POST", "/api/workspaces/" + ws + "/chat/resume", ``, 409, "no model provider is set up"},
		{"goal with no provider", "POST", "/api/goals", goal(`{}`), 400, "no model provider is set up"},
		{"null body", "PUT", "/api/workspaces/" + ws + "/grid", `null`, 400, "null is not a request"},
		{"trailing data", "PUT", "/api/workspaces/" + ws + "/grid", `{"rows":2,"cols":2} {"rows":6}`, 400, "more after the JSON value"},
		{"trailing garbage", "PUT", "/api/workspaces/" + ws + "/grid", `{"rows":2,"cols":2}]`, 400, "request body"},
		{"negative wall clock", "POST", "/api/goals", goal(`{"wallClock":"-5m"}`), 400, "settings.wallClock"},
		{"negative max steps", "POST", "/api/goals", goal(`{"maxSteps":-1}`), 400, "settings.maxSteps"},
		{"fleet with no provider", "POST", "/api/fleets", `{"yaml":"name: f\ntasks:\n  - {id: a, goal: x, check_manual: true}\n"}`, 400, "no model provider is set up"},
		{"fleet null body", "POST", "/api/fleets", `null`, 400, "send a JSON object"},
		{"fleet bulk of an unknown fleet", "POST", "/api/fleets/fleet-none/tasks/bulk", `{"task_ids":["a"],"action":"abort"}`, 404, "not found"},
		{"bad force flag", "DELETE", "/api/workspaces/" + ws + "?force=maybe", ``, 400, "force"},
		{"assets directory", "GET", "/assets/", ``, 404, ""},
		{"assets directory without slash", "GET", "/assets", ``, 404, ""},
	}
	for _, c := range cases {
		req, _ := http.NewRequest(c.method, srv.URL+c.path, strings.NewReader(c.body))
		req.Header.Set("Authorization", "Bearer "+token)
		if c.body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		var e struct{ Error string }
		json.Unmarshal(b, &e)
		if res.StatusCode != c.status || !strings.Contains(e.Error, c.says) {
			t.Errorf("%s: %d %s, want %d saying %q", c.name, res.StatusCode, b, c.status, c.says)
		}
		if c.name == "assets directory" && strings.Contains(string(b), ".js") {
			t.Errorf("/assets/ lists the build: %s", b)
		}
	}
	// Nothing those requests refused changed the grid.
	apiCall(t, "GET", srv.URL+"/api/workspaces", token, nil, &list)
	if n := len(list.Workspaces[0].Panes); n != 4 {
		t.Errorf("a refused request changed the grid: %d panes", n)
	}
	if n := len(list.Workspaces); n != 1 {
		t.Errorf("a refused request made workspaces: %d in all", n) // the refused fleet's panes
	}
}

// The command line refuses bad limits and unusable data dirs with 64 and a message naming
// them; `goal abort` of an unknown id exits like `show` and `resume`.
func TestCLIRefusesBadLimitsAndDataDirsWith64(t *testing.T) {
	model := llmtest.New(t, llmtest.Script{})
	file := tempFile(t, "a-file", "x")
	run := func(args ...string) []string {
		return append([]string{"goal", "run", "--base-url", model.OpenAIURL(), "--model", "scripted", "--data-dir", t.TempDir(),
			"--approve", "deny", "--goal", "x", "--check-manual"}, args...)
	}
	cases := []struct {
		name string
		args []string
		code int
		says string
	}{
		{"negative max steps", run("--max-steps", "-3"), cli.ExitUsage, "--max-steps -3"},
		{"negative wall clock", run("--wall-clock", "-1m"), cli.ExitUsage, "--wall-clock -1m0s"},
		{"zero wall clock", run("--wall-clock", "0"), cli.ExitUsage, "--wall-clock 0s: give a time above 0"},
		{"data dir is a file", []string{"goal", "list", "--data-dir", file}, cli.ExitUsage, "exists but is not a directory"},
		{"data dir under a file", []string{"goal", "show", "g-1", "--data-dir", filepath.Join(file, "sub")}, cli.ExitUsage, "part of its path is a file"},
		{"data dir that cannot be created", []string{"goal", "abort", "g-1", "--data-dir", "/proc/clusterspace-e2e"}, cli.ExitUsage, `"/proc" does not let this process create it`},
		{"serve on a bad data dir", []string{"serve", "--addr", "127.0.0.1:0", "--data-dir", file}, cli.ExitUsage, "exists but is not a directory"},
		{"show an unknown goal", []string{"goal", "show", "g-nope", "--data-dir", t.TempDir()}, cli.ExitUsage, "g-nope"},
		{"resume an unknown goal", []string{"goal", "resume", "g-nope", "--data-dir", t.TempDir()}, cli.ExitUsage, "g-nope"},
		{"abort an unknown goal", []string{"goal", "abort", "g-nope", "--data-dir", t.TempDir()}, cli.ExitUsage, "g-nope"},
	}
	for _, c := range cases {
		code, _, errs := runBinary(t, c.args...)
		if code != c.code || !strings.Contains(errs, c.says) {
			t.Errorf("%s: exit %d, stderr %q; want %d saying %q", c.name, code, errs, c.code, c.says)
		}
	}
}

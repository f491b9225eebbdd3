package api

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"

	"github.com/clusterspace/clusterspace/backend/engine"
)

// TestGoldenBrowserAnswers runs the browser pane's, the recipes' and the saved logins' calls on
// a real engine, whose browser pane is a real headless Chromium on a local page, and compares
// their answers with the golden JSON the frontend's tests read (src/lib/api/browser.test.ts,
// recipes and logins tests). A reveal answers the password on this door: the desktop's, which
// has no RevealGuard.
func TestGoldenBrowserAnswers(t *testing.T) {
	ctx := context.Background()
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(`<title>Golden page</title><p id=p>` + r.URL.Path + `</p>`))
	}))
	defer page.Close()
	eng, err := engine.Open(ctx, t.TempDir(), engine.WithLogger(slog.New(slog.DiscardHandler)), engine.WithConfigDir(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	table := New(Services{Version: "test", Workspaces: eng.Workspaces, Providers: eng.Providers, Terminals: eng.Terminals,
		Browsers: eng.Browsers, Panes: eng.Panes, Goals: eng.Goals, Chat: eng.Chat, SSH: eng.SSH, Settings: eng.Store,
		Recipes: eng.Recipes, Logins: eng.Logins})
	call := func(name, args string) json.RawMessage {
		t.Helper()
		res, err := table.Call(ctx, name, json.RawMessage(args))
		if err != nil {
			t.Fatalf("%s %s: %v", name, args, err)
		}
		return res
	}
	var l struct {
		Workspaces []struct {
			Panes []struct {
				ID string `json:"id"`
			} `json:"panes"`
		} `json:"workspaces"`
	}
	json.Unmarshal(call("ListWorkspaces", `{}`), &l)
	pane := l.Workspaces[0].Panes[1].ID
	answers := map[string]json.RawMessage{
		"BrowserOpen":     call("BrowserOpen", `{"paneId": "`+pane+`", "url": "`+page.URL+`/first", "width": 800, "height": 600}`),
		"BrowserNavigate": call("BrowserNavigate", `{"paneId": "`+pane+`", "url": "`+page.URL+`/second"}`),
		"BrowserNewTab":   call("BrowserNewTab", `{"paneId": "`+pane+`", "url": "`+page.URL+`/third"}`),
		"BrowserTabs":     call("BrowserTabs", `{"paneId": "`+pane+`"}`),
		"SaveRecipe": call("SaveRecipe", `{"name": "open page", "description": "Opens a page", "steps": [
			{"tool": "browser_navigate", "args": {"url": "`+page.URL+`/{{path}}"}}]}`),
		"ListRecipes": call("ListRecipes", `{}`),
		"RunRecipe":   call("RunRecipe", `{"name": "open page", "paneId": "`+pane+`", "params": {"path": "fourth"}}`),
		"SaveLogin":   call("SaveLogin", `{"id": "", "input": {"origin": "https://a.example", "username": "ada", "password": "hunter2"}}`),
		"ListLogins":  call("ListLogins", `{}`),
	}
	var saved struct {
		ID string `json:"id"`
	}
	json.Unmarshal(answers["SaveLogin"], &saved)
	answers["RevealLogin"] = call("RevealLogin", `{"id": "`+saved.ID+`"}`)
	checkGolden(t, answers,
		unstableValue{regexp.MustCompile(regexp.QuoteMeta(page.URL)), "http://127.0.0.1:1"},
		unstableValue{regexp.MustCompile(`127\.0\.0\.1:\d+`), "127.0.0.1:1"},
		unstableValue{regexp.MustCompile(`"(btab|login)-[0-9a-f]{6,}"`), `"$1-0"`})
}

package api

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"
)

// TestGoldenBrowserAnswers runs the browser pane's, the recipes' and the saved logins' calls on
// a real engine, whose browser pane is a real headless Chromium on a local page, and compares
// their answers with the golden JSON the frontend's tests read (src/lib/api/browser.test.ts,
// recipes and logins tests). A reveal answers the password on this door: the desktop's, which
// has no RevealGuard.
func TestGoldenBrowserAnswers(t *testing.T) {
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(`<title>Golden page</title><p id=p>` + r.URL.Path + `</p>`))
	}))
	defer page.Close()
	g := newGoldenEngine(t)
	_, l := g.workspaces()
	pane := l.Workspaces[0].Panes[1].ID
	answers := map[string]json.RawMessage{
		"BrowserOpen":     g.call("BrowserOpen", `{"paneId": "`+pane+`", "url": "`+page.URL+`/first", "width": 800, "height": 600}`),
		"BrowserNavigate": g.call("BrowserNavigate", `{"paneId": "`+pane+`", "url": "`+page.URL+`/second"}`),
		"BrowserNewTab":   g.call("BrowserNewTab", `{"paneId": "`+pane+`", "url": "`+page.URL+`/third"}`),
		"BrowserTabs":     g.call("BrowserTabs", `{"paneId": "`+pane+`"}`),
		"SaveRecipe": g.call("SaveRecipe", `{"name": "open page", "description": "Opens a page", "steps": [
			{"tool": "browser_navigate", "args": {"url": "`+page.URL+`/{{path}}"}}]}`),
		"ListRecipes": g.call("ListRecipes", `{}`),
		"RunRecipe":   g.call("RunRecipe", `{"name": "open page", "paneId": "`+pane+`", "params": {"path": "fourth"}}`),
		"SaveLogin":   g.call("SaveLogin", `{"id": "", "input": {"origin": "https://a.example", "username": "ada", "password": "hunter2"}}`),
		"ListLogins":  g.call("ListLogins", `{}`),
	}
	var saved struct {
		ID string `json:"id"`
	}
	json.Unmarshal(answers["SaveLogin"], &saved)
	answers["RevealLogin"] = g.call("RevealLogin", `{"id": "`+saved.ID+`"}`)
	checkGolden(t, answers,
		unstableValue{regexp.MustCompile(regexp.QuoteMeta(page.URL)), "http://127.0.0.1:1"},
		unstableValue{regexp.MustCompile(`127\.0\.0\.1:\d+`), "127.0.0.1:1"},
		unstableValue{regexp.MustCompile(`"(btab|login)-[0-9a-f]{6,}"`), `"$1-0"`})
}

package server

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The catalog routes: the listing, rendering a task template (an empty parameter is a 400
// naming params.NAME, an unknown template one naming task), and the path of a folder, which
// under serve is shown rather than opened.
func TestCatalogRoutes(t *testing.T) {
	h, tok := newLoggedIn(t)

	resp, body := h.do(t, "GET", "/api/catalog", tok, "")
	var l struct {
		Dir      string
		Personas []struct{ ID string }
		Tasks    []struct {
			ID         string
			Parameters []struct{ Name string }
		}
	}
	if resp.StatusCode != 200 || json.Unmarshal([]byte(body), &l) != nil || len(l.Personas) < 6 || len(l.Tasks) < 2 {
		t.Fatalf("list: %d %s", resp.StatusCode, body)
	}

	resp, body = h.do(t, "POST", "/api/catalog/tasks/review-change/render", tok, `{"params":{"repo":"/r","branch":"b","base":""}}`)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, `"field":"params.base"`) {
		t.Errorf("empty parameter: %d %s", resp.StatusCode, body)
	}
	resp, body = h.do(t, "POST", "/api/catalog/tasks/nope/render", tok, `{"params":{}}`)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, `"field":"task"`) || !strings.Contains(body, "fix-bug") {
		t.Errorf("unknown template: %d %s", resp.StatusCode, body)
	}
	resp, body = h.do(t, "POST", "/api/catalog/tasks/review-change/render", tok, `{"params":{"repo":"/r","branch":"feature","base":"main"}}`)
	var r struct{ Goal, Criterion, Persona string }
	if resp.StatusCode != 200 || json.Unmarshal([]byte(body), &r) != nil || r.Persona != "reviewer" || !strings.Contains(r.Goal, "branch feature") {
		t.Errorf("render: %d %s", resp.StatusCode, body)
	}

	resp, body = h.do(t, "POST", "/api/catalog/path", tok, `{"kind":"personas"}`)
	var p struct {
		Path   string
		Opened bool
	}
	if resp.StatusCode != 200 || json.Unmarshal([]byte(body), &p) != nil || p.Path != filepath.Join(l.Dir, "personas") || p.Opened {
		t.Errorf("path: %d %s", resp.StatusCode, body)
	}
	if st, err := os.Stat(p.Path); err != nil || !st.IsDir() {
		t.Errorf("the folder to open should exist: %v", err)
	}
	resp, body = h.do(t, "POST", "/api/catalog/path", tok, `{"kind":"plugins"}`)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, `"field":"kind"`) {
		t.Errorf("bad kind: %d %s", resp.StatusCode, body)
	}
	resp, body = h.do(t, "POST", "/api/catalog/customize", tok, `{"kind":"skills","id":"code-review"}`)
	if resp.StatusCode != 200 || !strings.Contains(body, filepath.Join(l.Dir, "skills", "code-review.md")) {
		t.Errorf("customize: %d %s", resp.StatusCode, body)
	}
}

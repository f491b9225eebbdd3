package server

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/workspace"
)

// A workspace export comes back in two ways: the raw file at POST /api/workspaces/import (for
// scripts) and the UI's call ImportWorkspace, whose argument is the file's text. Both add the
// workspace; a file over the import limit is refused with the import's own words on both, not
// with the size of the JSON that carried it (a file's quotes grow when sent as a JSON string).
func TestImportWorkspaceAsRawFileAndAsTheUIsCall(t *testing.T) {
	h := newHarness(t)
	tok := h.login(t).AccessToken
	list, _ := h.ws.List(context.Background())
	resp, file := h.do(t, "GET", "/api/workspaces/"+list.Workspaces[0].ID+"/export", tok, "")
	if resp.StatusCode != 200 {
		t.Fatalf("export: %d %s", resp.StatusCode, file)
	}
	if resp, body := h.do(t, "POST", "/api/workspaces/import", tok, file); resp.StatusCode != 201 || !strings.Contains(body, `"id":"ws-`) {
		t.Fatalf("raw import: %d %s", resp.StatusCode, body)
	}
	args, _ := json.Marshal(map[string]string{"text": file})
	if resp, body := h.do(t, "POST", "/api/rpc/ImportWorkspace", tok, string(args)); resp.StatusCode != 200 || !strings.Contains(body, `"id":"ws-`) {
		t.Fatalf("import call: %d %s", resp.StatusCode, body)
	}
	if after, _ := h.ws.List(context.Background()); len(after.Workspaces) != len(list.Workspaces)+2 {
		t.Errorf("workspaces after two imports: %d, want %d", len(after.Workspaces), len(list.Workspaces)+2)
	}
	// Just over the limit, and mostly quotes: as a JSON string it is nearly twice as long.
	big := `{"name":"` + strings.Repeat(`"`, workspace.MaxImportBytes/2) + strings.Repeat(" ", workspace.MaxImportBytes/2) + `"}`
	args, _ = json.Marshal(map[string]string{"text": big})
	resp, body := h.do(t, "POST", "/api/rpc/ImportWorkspace", tok, string(args))
	if resp.StatusCode != 400 || !strings.Contains(body, "a workspace export is at most") {
		t.Errorf("an oversized file: %d %.300s, want 400 saying how large an export may be", resp.StatusCode, body)
	}
}

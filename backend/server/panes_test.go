package server

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/workspace"
)

func TestPaneControlRoutes(t *testing.T) {
	h, tok := newLoggedIn(t)
	resp, body := h.do(t, "GET", "/api/workspaces", tok, "")
	var list workspace.List
	json.Unmarshal([]byte(body), &list)
	ws := list.Workspaces[0]
	a, b := ws.Panes[0].ID, ws.Panes[1].ID
	base := "/api/workspaces/" + ws.ID

	expect := func(method, path, body string, status int, want string) string {
		t.Helper()
		resp, got := h.do(t, method, path, tok, body)
		if resp.StatusCode != status || !strings.Contains(got, want) {
			t.Fatalf("%s %s %s: %d %s; want %d with %q", method, path, body, resp.StatusCode, got, status, want)
		}
		return got
	}
	expect("PUT", base+"/focus", `{"paneId":"`+b+`"}`, 200, `"focusedPaneId":"`+b+`"`)
	expect("PUT", base+"/focus", `{"paneId":"pane-nope"}`, 404, "call list_panes")
	expect("PUT", base+"/focus", `{}`, 400, `"field":"paneId"`)
	expect("POST", base+"/panes/"+a+"/maximize", "", 200, `"maximizedPaneId":"`+a+`"`)
	expect("POST", base+"/panes/"+a+"/maximize", "", 200, `"maximizedPaneId":""`)
	expect("GET", "/api/launch-templates", "", 200, `"id":"claude","name":"Claude Code","command":"claude"`)
	expect("POST", "/api/workspaces", `{"name":"Wide","rows":1,"cols":7}`, 400, `"field":"cols"`)
	expect("POST", "/api/workspaces", `{"name":"Wide","rows":1,"cols":5}`, 201, `"cols":5`)
	expect("PUT", base+"/panes/"+a+"/launch", `{"command":"sh","dir":"not/absolute"}`, 400, `"field":"dir"`)

	// A busy pane: 409 naming what runs, until the person says force.
	expect("POST", "/api/panes/"+a+"/terminal", `{}`, 200, "tabs")
	h.srv.deps.Terminals.Write(a, "", []byte("sleep 300\r"))
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		// Not just any foreground process: between fork and exec the child is still "bash".
		if st, _ := h.srv.deps.Terminals.Status(a, ""); strings.Contains(st.Foreground, "sleep") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("sleep never ran")
		}
	}
	got := expect("POST", base+"/panes/"+a+"/convert", `{"kind":"browser"}`, 409, `"field":"force"`)
	if !strings.Contains(got, "sleep") {
		t.Errorf("the 409 does not name what runs: %s", got)
	}
	expect("POST", base+"/panes/"+a+"/convert", `{"kind":"toaster"}`, 400, `"field":"kind"`)
	expect("POST", base+"/panes/"+a+"/convert", `{"kind":"terminal","force":true}`, 400, "already a terminal")
	_ = resp
}

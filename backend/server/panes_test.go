package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/clusterspace/clusterspace/backend/terminal"
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

// TestTerminalOverWebSocket opens a real shell in a real pane, attaches over the WebSocket,
// types a command and reads its output back, then detaches and re-attaches to get the
// scrollback replayed.
func TestTerminalOverWebSocket(t *testing.T) {
	h, tok := newLoggedIn(t)
	list, _ := h.ws.List(context.Background())
	pane := list.Workspaces[0].Panes[0].ID
	resp, body := h.do(t, "POST", "/api/panes/"+pane+"/terminal", tok, `{"cols":100,"rows":30}`)
	if resp.StatusCode != 200 {
		t.Fatalf("open: %d %s", resp.StatusCode, body)
	}
	var opened struct{ Tabs []terminal.TabInfo }
	json.Unmarshal([]byte(body), &opened)
	if len(opened.Tabs) != 1 || !opened.Tabs[0].Running || opened.Tabs[0].Cols != 100 {
		t.Fatalf("tabs %+v", opened.Tabs)
	}
	tab := opened.Tabs[0].TabID
	if resp, _ := h.do(t, "POST", "/api/panes/pane-made-up/terminal", tok, `{}`); resp.StatusCode != 404 {
		t.Fatalf("a made-up pane got a terminal: %d", resp.StatusCode)
	}

	ctx, conn := h.openWS(t, tok, 15*time.Second)
	sendMsg := func(m clientMessage) {
		b, _ := json.Marshal(m)
		if err := conn.Write(ctx, websocket.MessageText, b); err != nil {
			t.Fatal(err)
		}
	}
	// readUntil reads terminal frames until the decoded output contains want.
	readUntil := func(typ, want string) {
		t.Helper()
		var seen strings.Builder
		for {
			_, msg, err := conn.Read(ctx)
			if err != nil {
				t.Fatalf("waiting for %q in %s frames: %v; saw %q", want, typ, err, seen.String())
			}
			var env struct {
				Topic, Type string
				Data        terminalOutput
			}
			json.Unmarshal(msg, &env)
			if env.Topic == "terminal" && env.Type == typ {
				seen.Write(env.Data.Data)
				if strings.Contains(seen.String(), want) {
					return
				}
			}
		}
	}
	sendMsg(clientMessage{Type: "term.attach", PaneID: pane, TabID: tab})
	readUntil("replay", "")
	sendMsg(clientMessage{Type: "term.input", PaneID: pane, TabID: tab, Data: "echo cs-$((40+2))\r"})
	readUntil("output", "cs-42")
	sendMsg(clientMessage{Type: "term.resize", PaneID: pane, TabID: tab, Cols: 120, Rows: 40})
	sendMsg(clientMessage{Type: "term.input", PaneID: pane, TabID: tab, Data: "stty size\r"})
	readUntil("output", "40 120")
	// Detach and attach again: the replay carries what was on screen.
	sendMsg(clientMessage{Type: "term.detach", PaneID: pane, TabID: tab})
	sendMsg(clientMessage{Type: "term.attach", PaneID: pane, TabID: tab})
	readUntil("replay", "cs-42")
}

// TestBrowserPaneOverHTTPAndWebSocket opens a real Chromium tab in a pane on a local page,
// watches its screencast over the WebSocket, and clicks through it with a trusted input event.
func TestBrowserPaneOverHTTPAndWebSocket(t *testing.T) {
	h, tok := newLoggedIn(t)
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(`<title>Local page</title><button id=b style="position:fixed;left:0;top:0;width:300px;height:200px"
			onclick="if(event.isTrusted){document.title='clicked'}">press</button>`))
	}))
	defer page.Close()
	list, _ := h.ws.List(context.Background())
	pane := list.Workspaces[0].Panes[1].ID
	resp, body := h.do(t, "POST", "/api/panes/"+pane+"/browser", tok, `{"url":"`+page.URL+`","width":800,"height":600}`)
	if resp.StatusCode != 200 || !strings.Contains(body, `"title":"Local page"`) {
		t.Fatalf("open: %d %s", resp.StatusCode, body)
	}
	ctx, conn := h.openWS(t, tok, 20*time.Second)
	send := func(v any) {
		b, _ := json.Marshal(v)
		conn.Write(ctx, websocket.MessageText, b)
	}
	send(map[string]any{"type": "browser.watch", "paneId": pane})
	sawFrame := false
	for !sawFrame {
		_, msg, err := conn.Read(ctx)
		if err != nil {
			t.Fatalf("no screencast frame: %v", err)
		}
		var env struct {
			Topic, Type string
			Data        struct {
				PaneID string `json:"paneId"`
				Data   []byte `json:"data"`
			}
		}
		json.Unmarshal(msg, &env)
		sawFrame = env.Topic == "browser" && env.Type == "frame" && env.Data.PaneID == pane && len(env.Data.Data) > 100 &&
			env.Data.Data[0] == 0xFF && env.Data.Data[1] == 0xD8 // a JPEG
	}
	send(map[string]any{"type": "browser.input", "paneId": pane, "event": map[string]any{"type": "click", "x": 100, "y": 100}})
	deadline := time.Now().Add(10 * time.Second)
	for {
		title, err := h.browsers.Evaluate(ctx, pane, "document.title")
		if string(title) == `"clicked"` {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the trusted click did not reach the page: title %s %v", title, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if resp, _ := h.do(t, "POST", "/api/panes/pane-nope/browser", tok, `{}`); resp.StatusCode != 404 {
		t.Fatalf("a made-up pane got a browser: %d", resp.StatusCode)
	}
}

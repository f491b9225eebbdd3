package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

// mcpProbe is a shell script that tries both doors to a running app's MCP server: the data
// dir's Unix socket (what `clusterspace mcp` attaches through) and serve's /mcp over TCP, as
// curl goes (through the goal's proxy when one is set). It prints door-1=… (the socket) and
// door-2=… (TCP) with the HTTP status each door answered, 000 when nothing answered; the
// numbers are worked out by the shell, so the typed command line never matches.
func mcpProbe(sock, serveURL string) string {
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"probe","version":"1"}}}`
	post := `curl -s -m 5 -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' -d '` + body + `'`
	return fmt.Sprintf(`echo "door-$((0+1))=$(%s --unix-socket %s http://clusterspace.local/mcp)"; echo "door-$((1+1))=$(%s %s/mcp)"; echo probe-$((1+1))-done`,
		post, sock, post, serveURL)
}

// A confined goal reaches neither door of the app's MCP server — the data dir's socket nor
// serve's /mcp through its proxy, even when the person opens serve's port to it — while the
// same probe run outside the sandbox reaches both (so the refusals are the boundary's).
func TestConfinedGoalCannotReachTheAppsMCPServer(t *testing.T) {
	dataDir := t.TempDir()
	srv := startServe(t, dataDir, e2ePassword)
	sock := filepath.Join(dataDir, "mcp.sock")
	port := localPort(t, srv.URL)
	probe := mcpProbe(sock, srv.URL)

	// Control: outside any sandbox the socket answers initialize, and serve's /mcp answers
	// (401: it wants a client token).
	out, err := exec.Command("sh", "-c", probe).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "door-1=200") || !strings.Contains(string(out), "door-2=401") {
		t.Fatalf("the probe outside the sandbox did not reach the app's MCP server (%v):\n%s", err, out)
	}

	model := llmtest.New(t, llmtest.Script{})
	addScriptedProvider(t, srv, model)
	token := apiToken(t, srv.URL)
	pane := firstWorkspace(t, srv, token).Panes[0].ID
	model.Push(
		toolCall("write_to_terminal", map[string]any{"pane_id": pane, "text": probe, "wait_timeout_ms": 30000}),
		toolCall("abort_with_report", map[string]string{"reason": "probed", "what_was_learned": "what the sandbox let through"}),
	)
	apiCall(t, "POST", srv.URL+"/api/goals", token, map[string]any{
		"paneId": pane, "goal": "Reach the app's MCP server", "criterion": map[string]string{"kind": "manual"},
		"policy":   map[string]any{"risk": "network_write", "sandboxDir": t.TempDir(), "localPorts": []int{port}},
		"settings": map[string]any{"criticIntervalSteps": 0},
	}, nil)
	var seen string
	waitWithin(t, 60*time.Second, "the goal's probe to finish", func() bool {
		for _, r := range model.ChatRequests() {
			if res := r.LastToolResult(); strings.Contains(res, "probe-2-done") {
				seen = res
			}
		}
		return seen != ""
	})
	door2 := regexp.MustCompile(`door-2=(\d{3})`).FindStringSubmatch(seen)
	if !strings.Contains(seen, "door-1=000") || door2 == nil || door2[1] == "401" || door2[1] == "200" {
		t.Errorf("the confined goal reached the app's MCP server:\n%s", seen)
	}
}

package main

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

// A sandboxed goal at network_get reaches the network only through its proxy, which refuses
// this machine's services — until the person opens one with --allow-local-port.
func TestGoalCLIProxyOpensOnlyTheLocalPortsThePersonNames(t *testing.T) {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "dev-server-page")
	}))
	defer site.Close()
	port := strconv.Itoa(site.Listener.Addr().(*net.TCPAddr).Port)
	fetch := func(args ...string) string {
		t.Helper()
		srv := llmtest.New(t, llmtest.Script{Replies: []llmtest.Reply{
			toolCall("write_to_terminal", map[string]any{"pane_id": "term-1", "wait_timeout_ms": 15000,
				"text": "curl -s -m 5 " + site.URL + "/; echo; echo fetched-$((1+1))"}),
			toolCall("abort_with_report", map[string]string{"reason": "fetched", "what_was_learned": "what the proxy let through"}),
		}})
		code, out, errs := runGoalCLIOn(t, srv, append([]string{"--goal", "Fetch the dev server", "--check-manual", "--risk", "network_get"}, args...)...)
		if code != 2 {
			t.Fatalf("exit %d\n%s\n%s", code, out, errs)
		}
		return srv.ChatRequests()[1].LastToolResult()
	}
	if got := fetch(); strings.Contains(got, "dev-server-page") || !strings.Contains(got, "outside a confined goal's reach") || !strings.Contains(got, "fetched-2") {
		t.Errorf("a local server without --allow-local-port:\n%s", got)
	}
	if got := fetch("--allow-local-port", port); !strings.Contains(got, "dev-server-page") {
		t.Errorf("a local server opened with --allow-local-port %s:\n%s", port, got)
	}
}

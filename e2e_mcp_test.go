package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
	"github.com/clusterspace/clusterspace/backend/mcpserve/mcpservetest"
)

// mcpStdio starts cmd as an MCP server on its stdin and stdout and connects a client named name
// to it; what the command writes to stderr is kept, for failure messages.
func mcpStdio(t *testing.T, ctx context.Context, name string, cmd *exec.Cmd) (*sdk.ClientSession, *lockedBuffer) {
	t.Helper()
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	cs, err := sdk.NewClient(&sdk.Implementation{Name: name}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to the MCP server %v over stdio: %v\n%s", cmd.Args, err, stderr.String())
	}
	return cs, stderr
}

// mcpFirstPane lists the panes through MCP and returns the first one's id.
func mcpFirstPane(t *testing.T, ctx context.Context, cs *sdk.ClientSession) string {
	t.Helper()
	res := mcpservetest.Call(t, ctx, cs, "list_panes", map[string]any{})
	var page struct {
		Items []struct {
			PaneID string `json:"pane_id"`
		} `json:"items"`
	}
	if res.IsError || json.Unmarshal([]byte(mcpservetest.Text(res)), &page) != nil || len(page.Items) == 0 {
		t.Fatalf("list_panes: error %v, %q", res.IsError, mcpservetest.Text(res))
	}
	return page.Items[0].PaneID
}

// TestMCPStdioRefusesACallAboveItsCeiling is issue #31's done-when: an MCP client made with the
// official Go SDK lists and calls `clusterspace mcp`'s tools under a policy that refuses one.
func TestMCPStdioRefusesACallAboveItsCeiling(t *testing.T) {
	ctx := withTimeout(t, 90*time.Second)
	dataDir := t.TempDir()
	cmd := exec.Command(testBinary(t), "mcp", "--data-dir", dataDir, "--risk", "read_only")
	cs, stderr := mcpStdio(t, ctx, "e2e", cmd)
	defer cs.Close()

	offered := map[string]bool{}
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		offered[tool.Name] = true
	}
	for _, want := range []string{"list_panes", "write_to_terminal", "read_terminal_output", "wait_for_output", "browser_navigate",
		"browser_verify_visual_state", "start_goal", "goal_status", "report_progress", "complete_task"} {
		if !offered[want] {
			t.Errorf("%s is not offered (offered: %v)", want, offered)
		}
	}
	if offered["claim_complete"] {
		t.Error("claim_complete is offered: a goal's bookkeeping means nothing to an MCP client")
	}

	pane := mcpFirstPane(t, ctx, cs)
	res := mcpservetest.Call(t, ctx, cs, "write_to_terminal", map[string]any{"pane_id": pane, "text": "echo MCP-REFUSED-$((6*7))"})
	msg := mcpservetest.Text(res)
	if !res.IsError || !strings.Contains(msg, "write_to_terminal is write_local, above this client's ceiling read_only") ||
		!strings.Contains(msg, "--approve deny") {
		t.Fatalf("write_to_terminal under read_only: error %v, %q", res.IsError, msg)
	}
	// Nothing was typed: the pane's terminal shows no trace of the command.
	res = mcpservetest.Call(t, ctx, cs, "read_terminal_output", map[string]any{"pane_id": pane})
	if res.IsError || strings.Contains(mcpservetest.Text(res), "MCP-REFUSED") {
		t.Fatalf("read_terminal_output after the refusal: error %v, %q", res.IsError, mcpservetest.Text(res))
	}
	if err := cs.Close(); err != nil {
		t.Errorf("close: %v\n%s", err, stderr.String())
	}
}

// TestMCPOverServeNeedsATokenAndDrivesARealTerminal: serve's /mcp refuses a request without a
// valid token, and with one types into and reads a real PTY; `clusterspace mcp` beside the
// running serve attaches to it, and its call above the ceiling waits for the person's answer in
// the app's approvals.
func TestMCPOverServeNeedsATokenAndDrivesARealTerminal(t *testing.T) {
	ctx := withTimeout(t, 120*time.Second)
	bin := testBinary(t)
	dataDir := t.TempDir()
	out, err := exec.Command(bin, "mcp", "token", "create", "ci", "--risk", "write_local", "--data-dir", dataDir).Output()
	if err != nil {
		t.Fatalf("mcp token create: %v", err)
	}
	token := strings.TrimSpace(string(out))
	srv := startServe(t, dataDir, e2ePassword)

	for name, auth := range map[string]string{"no token": "", "a wrong token": "Bearer csmcp_0123", "a login token": "Bearer " + apiToken(t, srv.URL)} {
		resp := mcpservetest.Post(t, srv.URL+"/mcp", auth, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("/mcp with %s: %d, want 401", name, resp.StatusCode)
		}
	}

	cs, err := sdk.NewClient(&sdk.Implementation{Name: "e2e-http"}, nil).Connect(ctx, &sdk.StreamableClientTransport{
		Endpoint: srv.URL + "/mcp", HTTPClient: &http.Client{Transport: mcpservetest.Bearer(token)}}, nil)
	if err != nil {
		t.Fatalf("connect to /mcp: %v\n%s", err, srv.stderr.String())
	}
	defer cs.Close()
	pane := mcpFirstPane(t, ctx, cs)
	res := mcpservetest.Call(t, ctx, cs, "write_to_terminal", map[string]any{"pane_id": pane, "text": "echo MCP-$((6*7))-OK"})
	if res.IsError {
		t.Fatalf("write_to_terminal at write_local: %q", mcpservetest.Text(res))
	}
	res = mcpservetest.Call(t, ctx, cs, "wait_for_output", map[string]any{"pane_id": pane, "until_pattern": "MCP-42-OK", "timeout_ms": 15000})
	if res.IsError {
		t.Fatalf("wait_for_output: %q", mcpservetest.Text(res))
	}
	res = mcpservetest.Call(t, ctx, cs, "read_terminal_output", map[string]any{"pane_id": pane})
	if res.IsError || !strings.Contains(mcpservetest.Text(res), "MCP-42-OK") {
		t.Fatalf("read_terminal_output: error %v, %q", res.IsError, mcpservetest.Text(res))
	}

	// Attached beside serve, without a token: it reads, and a write waits for the person.
	cmd := exec.Command(bin, "mcp", "--data-dir", dataDir)
	cmd.Env = append(os.Environ(), "CLUSTERSPACE_MCP_TOKEN=")
	local, attachErr := mcpStdio(t, ctx, "e2e-attach", cmd)
	defer local.Close()
	res = mcpservetest.Call(t, ctx, local, "read_terminal_output", map[string]any{"pane_id": pane})
	if res.IsError || !strings.Contains(mcpservetest.Text(res), "MCP-42-OK") {
		t.Fatalf("read_terminal_output attached: error %v, %q\n%s", res.IsError, mcpservetest.Text(res), attachErr.String())
	}
	done := make(chan *sdk.CallToolResult, 1)
	go func() {
		r, err := local.CallTool(ctx, &sdk.CallToolParams{Name: "write_to_terminal", Arguments: map[string]any{"pane_id": pane, "text": "echo NOT-TYPED"}})
		if err != nil {
			r = &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "call failed: " + err.Error()}}}
		}
		done <- r
	}()
	login := apiToken(t, srv.URL)
	var pending struct {
		Approvals []struct{ ID, Tool, Reason string }
	}
	waitFor(t, "the attached client's approval request in the app", func() bool {
		apiCall(t, "GET", srv.URL+"/api/approvals", login, nil, &pending)
		return len(pending.Approvals) == 1
	})
	if a := pending.Approvals[0]; a.Tool != "write_to_terminal" || !strings.HasPrefix(a.Reason, "MCP client local: ") {
		t.Fatalf("approval request %+v", a)
	}
	apiCall(t, "POST", srv.URL+"/api/approvals/"+pending.Approvals[0].ID, login, map[string]string{"status": "deny", "reason": "not now"}, nil)
	select {
	case res = <-done:
	case <-ctx.Done():
		t.Fatal("the attached call did not end after the person's answer")
	}
	if !res.IsError || !strings.Contains(mcpservetest.Text(res), "not now") {
		t.Fatalf("denied write_to_terminal: error %v, %q", res.IsError, mcpservetest.Text(res))
	}

	// A revoked token stops working at once, while serve runs.
	if out, err := exec.Command(bin, "mcp", "token", "revoke", "ci", "--data-dir", dataDir).CombinedOutput(); err != nil {
		t.Fatalf("mcp token revoke: %v %s", err, out)
	}
	if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "list_panes", Arguments: map[string]any{}}); err == nil {
		t.Fatal("a call with a revoked token succeeded")
	}
	if strings.Contains(srv.stderr.String(), token) {
		t.Fatal("serve's log holds the token")
	}
}

// TestMCPAgentPaneReportsProgressToItsGoal: a goal's pane started from the claude template,
// unconfined, under serve, finds ClusterSpace's MCP server in its private .claude.json; the
// server started as configured there (as Claude Code starts it) attaches to serve with the
// pane's token, its report_progress reaches the goal's next turn, and goal_status shows the
// goal's verification.
func TestMCPAgentPaneReportsProgressToItsGoal(t *testing.T) {
	ctx := withTimeout(t, 120*time.Second)
	model := llmtest.New(t, llmtest.Script{})
	dataDir := t.TempDir()
	srv := startServe(t, dataDir, e2ePassword)
	addScriptedProvider(t, srv, model)
	token := apiToken(t, srv.URL)
	first := firstWorkspace(t, srv, token)
	ws, pane := first.ID, first.Panes[0].ID
	apiCall(t, "PUT", fmt.Sprintf("%s/api/workspaces/%s/panes/%s/launch", srv.URL, ws, pane), token,
		map[string]any{"template": "claude", "command": "claude"}, nil)

	reported := make(chan struct{})
	var sawReport atomic.Bool
	model.Push(
		// The goal's first turn lasts until the pane's agent has reported: its report is then
		// on the goal's next turn, whatever the timing.
		llmtest.Reply{Compute: func(llmtest.Request) llmtest.Reply {
			select {
			case <-reported:
			case <-time.After(60 * time.Second):
			}
			return toolCall("poll_terminal_status", map[string]string{"pane_id": pane})
		}},
		llmtest.Reply{Compute: func(req llmtest.Request) llmtest.Reply {
			sawReport.Store(strings.Contains(string(req.Body), "PROGRESS-MARK-7"))
			return toolCall("claim_complete", map[string]string{"rationale": "the agent in the pane reported its progress"})
		}},
	)
	scratch := t.TempDir()
	var g struct{ ID string }
	apiCall(t, "POST", srv.URL+"/api/goals", token, map[string]any{
		"paneId": pane, "goal": "Have the agent in the pane report its progress", "criterion": map[string]string{"kind": "shell", "command": "true"},
		"policy": map[string]string{"risk": "write_local"}, "settings": map[string]any{"criticIntervalSteps": 0, "scratchDir": scratch},
	}, &g)

	var server struct {
		Command string
		Args    []string
		Env     map[string]string
	}
	claudeJSON := filepath.Join(scratch, "agent-claude", ".claude.json")
	waitFor(t, "the pane's .claude.json with ClusterSpace's MCP server", func() bool {
		var cfg struct {
			MCPServers map[string]json.RawMessage `json:"mcpServers"`
		}
		b, err := os.ReadFile(claudeJSON)
		return err == nil && json.Unmarshal(b, &cfg) == nil && cfg.MCPServers["clusterspace"] != nil &&
			json.Unmarshal(cfg.MCPServers["clusterspace"], &server) == nil
	})
	if server.Env["CLUSTERSPACE_MCP_TOKEN"] == "" || len(server.Args) == 0 || server.Args[0] != "mcp" {
		t.Fatalf("the configured server: %+v", server)
	}
	cmd := exec.Command(server.Command, server.Args...)
	for k, v := range server.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Env = append(cmd.Env, "PATH="+os.Getenv("PATH"), "HOME="+os.Getenv("HOME"))
	cs, stderr := mcpStdio(t, ctx, "claude-stand-in", cmd)
	defer cs.Close()
	res := mcpservetest.Call(t, ctx, cs, "report_progress", map[string]any{"text": "PROGRESS-MARK-7: half of it is done"})
	close(reported)
	if res.IsError || !strings.Contains(mcpservetest.Text(res), g.ID) {
		t.Fatalf("report_progress: error %v, %q\n%s", res.IsError, mcpservetest.Text(res), stderr.String())
	}
	var status struct{ Status string }
	waitFor(t, "the goal to complete", func() bool {
		apiCall(t, "GET", srv.URL+"/api/goals/"+g.ID, token, nil, &status)
		return status.Status == "completed" || status.Status == "failed"
	})
	if status.Status != "completed" || !sawReport.Load() {
		t.Fatalf("goal %s; its next turn saw the report: %v", status.Status, sawReport.Load())
	}
	res = mcpservetest.Call(t, ctx, cs, "goal_status", map[string]any{"goal_id": g.ID})
	var gs struct {
		Status        string
		Verifications []struct{ Passed bool }
	}
	if res.IsError || json.Unmarshal([]byte(mcpservetest.Text(res)), &gs) != nil || gs.Status != "completed" || len(gs.Verifications) != 1 || !gs.Verifications[0].Passed {
		t.Fatalf("goal_status: %q", mcpservetest.Text(res))
	}
	// The pane's client is read_only: typing into a terminal would wait for the person.
	out, err := exec.Command(testBinary(t), "mcp", "token", "list", "--data-dir", dataDir).Output()
	if err != nil || !strings.Contains(string(out), "pane-"+pane) || !strings.Contains(string(out), "read_only") {
		t.Fatalf("mcp token list: %v %s", err, out)
	}
}

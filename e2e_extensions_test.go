package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/cli"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
	"github.com/clusterspace/clusterspace/backend/mcp/mcptest"
)

// `goal run --config-dir` offers the config dir's plugin and MCP server to the model, runs
// them, asks (and, with --approve deny, is refused) above the ceiling, and leaves no server
// process behind when the goal — and with it the command — ends.
func TestGoalCLIUsesPluginsAndMCPServersOfTheConfigDir(t *testing.T) {
	cfg := t.TempDir()
	os.MkdirAll(filepath.Join(cfg, "tools"), 0o755)
	os.WriteFile(filepath.Join(cfg, "tools", "shout.js"), []byte(`module.exports = {
  description: "Upper-case a text.", risk: "read_only",
  parameters: {type: "object", properties: {text: {type: "string"}}, required: ["text"]},
  run(args) { return args.text.toUpperCase() + "!" },
};`), 0o644)
	mark := fmt.Sprintf("cli-mcp-%d", time.Now().UnixNano())
	cmd, args := mcptest.ServerArgs(mcptest.Serve, mark)
	data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"t": map[string]any{"command": cmd, "args": args, "risk": "read_only", "tools": map[string]any{"add": map[string]any{"risk": "network_write"}}},
	}})
	os.WriteFile(filepath.Join(cfg, "mcp.json"), data, 0o600)

	srv := llmtest.New(t, llmtest.Script{Replies: []llmtest.Reply{
		toolCall("shout", map[string]string{"text": "hello"}),
		toolCall("mcp__t__echo", map[string]string{"text": "from the cli"}),
		toolCall("mcp__t__add", map[string]int{"a": 1, "b": 2}),
		toolCall("abort_with_report", map[string]string{"reason": "done testing", "what_was_learned": "the tools work"}),
	}})
	code, out, errs := runGoalCLIOn(t, srv, "--goal", "Use the tools", "--check-manual", "--risk", "read_only", "--config-dir", cfg)
	if code != cli.ExitGoalAborted {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	for _, want := range []string{"ok  shout                  HELLO!", "ok  mcp__t__echo           echo: from the cli",
		"approval  asked for mcp__t__add (network_write): mcp__t__add is network_write, above this goal's ceiling read_only", "ERR mcp__t__add"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	var results []string
	for _, r := range srv.ChatRequests() {
		results = append(results, string(r.Body))
	}
	all := strings.Join(results, "\n")
	for _, want := range []string{"HELLO!", "echo: from the cli", "denied"} {
		if !strings.Contains(all, want) {
			t.Errorf("the model never read %q", want)
		}
	}
	if pids := mcptest.Processes(mark); len(pids) != 0 {
		t.Fatalf("MCP server processes left after goal run exited: %v", pids)
	}
}

package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/clusterspace/clusterspace/backend/cli"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
	"github.com/clusterspace/clusterspace/backend/mcp/mcptest"
)

// mcpJSON is a config dir's mcp.json with these servers. The tests write it with the rest of
// the config dir into a t.TempDir, which only its owner can enter: its env values may be
// secrets.
func mcpJSON(t *testing.T, servers map[string]any) string {
	t.Helper()
	data, err := json.Marshal(map[string]any{"mcpServers": servers})
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// `goal run --config-dir` offers the config dir's plugin and MCP server to the model, runs
// them, asks (and, with --approve deny, is refused) above the ceiling, and leaves no server
// process behind when the goal — and with it the command — ends.
func TestGoalCLIUsesPluginsAndMCPServersOfTheConfigDir(t *testing.T) {
	mark := fmt.Sprintf("cli-mcp-%d", time.Now().UnixNano())
	cmd, args := mcptest.ServerArgs(mcptest.Serve, mark)
	cfg := t.TempDir()
	writeFiles(t, cfg, map[string]string{"tools/shout.js": `module.exports = {
  description: "Upper-case a text.", risk: "read_only",
  parameters: {type: "object", properties: {text: {type: "string"}}, required: ["text"]},
  run(args) { return args.text.toUpperCase() + "!" },
};`, "mcp.json": mcpJSON(t, map[string]any{
		"t": map[string]any{"command": cmd, "args": args, "risk": "read_only", "tools": map[string]any{"add": map[string]any{"risk": "network_write"}}},
	})})

	srv := llmtest.New(t, llmtest.Script{Replies: []llmtest.Reply{
		toolCall("shout", map[string]string{"text": "hello"}),
		toolCall("mcp__t__echo", map[string]string{"text": "from the cli"}),
		toolCall("mcp__t__add", map[string]int{"a": 1, "b": 2}),
		toolCall("abort_with_report", map[string]string{"reason": "done testing", "what_was_learned": "the tools work"}),
	}})
	// Unconfined: a sandboxed goal's MCP calls run outside its sandbox and are asked every
	// time (TestEveryToolOfAConfinedGoalStaysInsideOrAsks).
	code, out, errs := runGoalCLIUnconfined(t, srv, "--goal", "Use the tools", "--check-manual", "--risk", "read_only", "--config-dir", cfg)
	if code != cli.ExitGoalAborted {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	wantOutput(t, out, "ok  shout                  HELLO!", "ok  mcp__t__echo           echo: from the cli",
		"approval  asked for mcp__t__add (network_write): mcp__t__add is network_write, above this goal's ceiling read_only", "ERR mcp__t__add")
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

// Settings → Plugins and → MCP in the real UI under serve: plugins with their risk and a load
// error with its line; servers started from the page, their tools, a failure with its reason,
// env values masked and nowhere in the page; the server process ends with serve.
func TestSettingsPluginsAndMCPEndToEnd(t *testing.T) {
	const secret = "env-CANARY-s3cr3t"
	mark := fmt.Sprintf("settings-mcp-%d", time.Now().UnixNano())
	cmd, args := mcptest.ServerArgs(mcptest.Serve, mark)
	cfg := t.TempDir()
	writeFiles(t, cfg, map[string]string{
		"tools/shout.js":  `module.exports = {description: "Upper-case a text.", risk: "read_only", run(a) { return "!" }};`,
		"tools/broken.js": "module.exports = {\n  description: \"x\",\n  run() { return ( },\n};",
		"mcp.json": mcpJSON(t, map[string]any{
			"t":       map[string]any{"command": cmd, "args": args, "risk": "read_only", "env": map[string]string{"API_TOKEN": secret}},
			"missing": map[string]any{"command": "/nonexistent/mcp-server"},
		}),
	})
	t.Setenv("CLUSTERSPACE_CONFIG_DIR", cfg)

	srv, ctx := openApp(t)
	step(t, ctx, "open Settings → Plugins",
		chromedp.Click(`[data-testid=settings-open]`),
		chromedp.WaitVisible(`[data-testid=settings]`),
		chromedp.Click(`[data-testid=settings-tab-plugins]`),
		chromedp.WaitVisible(`[data-testid=plugin-row][data-name=shout][data-risk=read_only]`),
		waitJS(`(document.querySelector('[data-testid=plugin-error]')?.textContent ?? '').includes('broken.js:3')`))
	shot(t, ctx, "settings-plugins")
	step(t, ctx, "open Settings → MCP and start the servers",
		chromedp.Click(`[data-testid=settings-tab-mcp]`),
		chromedp.WaitVisible(`[data-testid=mcp-server][data-name=t]`),
		chromedp.Click(`[data-testid=mcp-start]`),
		chromedp.WaitVisible(`[data-testid=mcp-server][data-name=t][data-state=running] [data-testid=mcp-tool][data-name=mcp__t__echo]`),
		chromedp.WaitVisible(`[data-testid=mcp-server][data-name=missing][data-state=failed]`),
		waitJS(`document.querySelector('[data-testid=mcp-server][data-name=t] [data-testid=mcp-secret]').textContent === 'API_TOKEN: ••••••'`))
	shot(t, ctx, "settings-mcp")
	var page string
	if err := chromedp.Run(ctx, chromedp.OuterHTML("html", &page)); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(page, secret) || strings.Contains(srv.stderr.String(), secret) {
		t.Fatal("an MCP server's env value reached the page or serve's log")
	}
	if n := len(mcptest.Processes(mark)); n != 1 {
		t.Fatalf("%d server processes while serve runs, want 1", n)
	}
	srv.Stop(t)
	if pids := mcptest.Processes(mark); len(pids) != 0 {
		t.Fatalf("MCP server processes left after serve stopped: %v", pids)
	}
}

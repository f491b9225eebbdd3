package mcp

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/clusterspace/clusterspace/backend/internal/syncbuf"
	"github.com/clusterspace/clusterspace/backend/mcp/mcptest"
	"github.com/clusterspace/clusterspace/backend/tools"
)

// callByName calls a tool as the agent does: looked up in the registry at the time of the call.
func callByName(t *testing.T, reg *tools.Registry, name, args string) tools.Result {
	t.Helper()
	tl, ok := reg.Get(name)
	if !ok {
		t.Fatalf("the registry has no tool %s (the model would read \"there is no tool named\"); it offers %v", name, reg.Names())
	}
	return call(t, tl, args)
}

func definition(reg *tools.Registry, name string) (tools.Definition, bool) {
	for _, d := range reg.Definitions() {
		if d.Name == name {
			return d, true
		}
	}
	return tools.Definition{}, false
}

func waitState(t *testing.T, m *Manager, server, state string) ServerStatus {
	t.Helper()
	var last ServerStatus
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		for _, s := range m.Status().Servers {
			if s.Name == server {
				last = s
			}
		}
		if last.State == state {
			return last
		}
	}
	t.Fatalf("server %s is %q, not %q: %+v", server, last.State, state, last)
	return last
}

// withdrawn checks that a tool is no longer offered (neither listed nor described to the
// model), yet a call of it still finds a tool that answers why, without running anything.
func withdrawn(t *testing.T, reg *tools.Registry, m *Manager, name, why string) {
	t.Helper()
	if _, ok := definition(reg, name); ok || slices.Contains(reg.Names(), name) || find(m.Tools(), name) != nil {
		t.Fatalf("%s is still offered", name)
	}
	tl, ok := reg.Get(name)
	if !ok {
		t.Fatalf("%s is not found: a call of it would read \"there is no tool named\"", name)
	}
	if tl.Risk() != tools.ReadOnly {
		t.Fatalf("%s's stand-in asks for risk %v, though it runs nothing", name, tl.Risk())
	}
	if res := call(t, tl, `{}`); !res.IsError || !strings.Contains(res.Text, why) {
		t.Fatalf("a call of %s: %+v", name, res)
	}
}

// A stdio server killed or crashed mid-session: a call of its tool, looked up as the agent
// looks it up, says that it is not running and why (exit status, last line of its error
// output) and what to do; its tools are no longer offered; and it is started again as before
// (here by Start, as Settings does).
func TestKilledStdioServerCallSaysItIsNotRunningAndWhy(t *testing.T) {
	cfg, mark := t.TempDir(), marker(t)
	writeConfig(t, cfg, map[string]any{"k": stdio(mcptest.Serve, mark, nil), "c": stdio(mcptest.Serve, mark, nil)})
	m := New(cfg, Options{})
	defer m.Close()
	reg := tools.NewRegistry()
	reg.AddSource(m)
	if res := callByName(t, reg, "mcp__k__echo", `{"text":"hi"}`); res.Text != "echo: hi" {
		t.Fatalf("echo: %+v", res)
	}
	before, _ := reg.Get("mcp__k__echo") // held across the kill: the call races the watcher
	if err := syscall.Kill(waitState(t, m, "k", "running").PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for _, res := range []tools.Result{call(t, before, `{"text":"hi"}`), callByName(t, reg, "mcp__k__echo", `{"text":"hi"}`)} {
		if !res.IsError || !strings.Contains(res.Text, "MCP server k is not running (it exited: signal: killed)") ||
			!strings.Contains(res.Text, "go on without them") {
			t.Fatalf("a call after the kill: %+v", res)
		}
	}
	if st := waitState(t, m, "k", "exited"); !strings.Contains(st.Error, "signal: killed") {
		t.Fatalf("status: %+v", st)
	}
	withdrawn(t, reg, m, "mcp__k__add", "signal: killed")

	// A crash: its exit status and the last line of its error output.
	if res := callByName(t, reg, "mcp__c__crash", `{}`); !res.IsError ||
		!strings.Contains(res.Text, "MCP server c is not running (it exited: exit status 3; the last line of its error output: crashing on purpose)") {
		t.Fatalf("crash: %+v", res)
	}
	if res := callByName(t, reg, "mcp__c__echo", `{"text":"hi"}`); !res.IsError || !strings.Contains(res.Text, "exit status 3") {
		t.Fatalf("echo after the crash: %+v", res)
	}
	if p := strings.Join(m.Problems(), "\n"); !strings.Contains(p, "MCP server c stopped (it exited: exit status 3") {
		t.Fatalf("problems: %s", p)
	}

	// Restarted as before: the real tools are back, and work.
	m.Start()
	if d, _ := definition(reg, "mcp__k__echo"); !strings.Contains(string(d.Schema), `"text"`) {
		t.Fatalf("echo after the restart: %+v", d)
	}
	if res := callByName(t, reg, "mcp__k__echo", `{"text":"back"}`); res.Text != "echo: back" {
		t.Fatalf("echo after the restart: %+v", res)
	}
	m.Close()
	waitGone(t, mark)
}

// A streamable-HTTP server that goes away: the call that finds it gone is told so, the
// server is marked failed with the error, its tools are withdrawn from what is offered, and
// later calls are told the same.
func TestClosedHTTPServerIsMarkedFailedAndItsToolsWithdrawn(t *testing.T) {
	server := mcptest.NewServer()
	srv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, nil))
	defer srv.Close()
	cfg := t.TempDir()
	writeConfig(t, cfg, map[string]any{"web": map[string]any{"url": srv.URL}})
	m := New(cfg, Options{StartTimeout: 5 * time.Second})
	defer m.Close()
	reg := tools.NewRegistry()
	reg.AddSource(m)
	if res := callByName(t, reg, "mcp__web__echo", `{"text":"over http"}`); res.Text != "echo: over http" {
		t.Fatalf("echo: %+v problems: %v", res, m.Problems())
	}
	srv.Close()
	for range 2 { // the call that finds it gone, then a call of its stand-in
		res := callByName(t, reg, "mcp__web__echo", `{"text":"anyone?"}`)
		if !res.IsError || !strings.Contains(res.Text, "MCP server web is not running (the connection to it failed: dial tcp") ||
			!strings.Contains(res.Text, "connection refused") || !strings.Contains(res.Text, "go on without them") {
			t.Fatalf("a call after the server went: %+v", res)
		}
	}
	st := waitState(t, m, "web", "failed")
	if !strings.Contains(st.Error, "connection refused") || len(st.Tools) != 0 {
		t.Fatalf("status: %+v", st)
	}
	for _, name := range []string{"mcp__web__echo", "mcp__web__add", "mcp__web__hang"} {
		withdrawn(t, reg, m, name, "connection refused")
	}
	if ts := m.Tools(); len(ts) != 0 {
		t.Fatalf("a failed server's tools are still offered: %d", len(ts))
	}
	if p := strings.Join(m.Problems(), "\n"); !strings.Contains(p, "MCP server web failed (the connection to it failed") {
		t.Fatalf("problems: %s", p)
	}
}

// A stdio server that prints a banner and log lines on its stdout, before and between its
// messages, works: the lines are skipped and logged.
func TestBannerOnStdoutIsSkipped(t *testing.T) {
	cfg, mark := t.TempDir(), marker(t)
	writeConfig(t, cfg, map[string]any{"b": stdio(mcptest.Banner, mark, nil)})
	var logs syncbuf.Buffer
	m := New(cfg, Options{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	defer m.Close()
	ts := m.Tools()
	noisy, echo := find(ts, "mcp__b__noisy"), find(ts, "mcp__b__echo")
	if noisy == nil || echo == nil {
		t.Fatalf("tools: %v problems: %v", ts, m.Problems())
	}
	for i := range 3 {
		if res := call(t, noisy, `{"text":"a"}`); res.IsError || res.Text != "noisy: a" {
			t.Fatalf("noisy #%d: %+v", i, res)
		}
		if res := call(t, echo, `{"text":"b"}`); res.IsError || res.Text != "echo: b" {
			t.Fatalf("echo #%d: %+v", i, res)
		}
	}
	if st := m.Status(); st.Servers[0].State != "running" {
		t.Fatalf("status: %+v", st)
	}
	l := logs.String()
	for _, want := range []string{"mcptest server v1 -- ready", "[INFO] listening on stdio", "a log line in JSON, not JSON-RPC"} {
		if !strings.Contains(l, want) {
			t.Errorf("the skipped line %q was not logged:\n%s", want, l)
		}
	}
	m.Close()
	waitGone(t, mark)
}

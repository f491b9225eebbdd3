package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
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

func TestMain(m *testing.M) {
	mcptest.ServeIfAsked()
	os.Exit(m.Run())
}

// stdio is an mcp.json entry for the test server in mode.
func stdio(mode, marker string, extra map[string]any) map[string]any {
	cmd, args := mcptest.ServerArgs(mode, marker)
	e := map[string]any{"command": cmd, "args": args}
	for k, v := range extra {
		e[k] = v
	}
	return e
}

func writeConfig(t *testing.T, dir string, servers map[string]any) {
	t.Helper()
	data, _ := json.MarshalIndent(map[string]any{"mcpServers": servers}, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, FileName), data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func marker(t *testing.T) string { return fmt.Sprintf("marker-%s-%d", t.Name(), time.Now().UnixNano()) }

func find(ts []tools.Tool, name string) tools.Tool {
	for _, t := range ts {
		if t.Name() == name {
			return t
		}
	}
	return nil
}

func call(t *testing.T, tl tools.Tool, args string) tools.Result {
	t.Helper()
	res, err := tl.Run(context.Background(), tools.Call{ID: "c", Name: tl.Name(), Args: json.RawMessage(args)})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func waitGone(t *testing.T, mark string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if len(mcptest.Processes(mark)) == 0 {
			return
		}
	}
	t.Fatalf("server processes still running: %v", mcptest.Processes(mark))
}

// A stdio server starts on the first listing, its tools are offered as mcp__NAME__TOOL at
// the declared risks with their schemas, called with checked arguments, and it ends with
// the manager.
func TestStdioServerToolsAreOfferedCalledAndEndWithTheManager(t *testing.T) {
	cfg, mark := t.TempDir(), marker(t)
	writeConfig(t, cfg, map[string]any{"t": stdio(mcptest.Serve, mark, map[string]any{
		"risk": "read_only", "tools": map[string]any{"add": map[string]any{"risk": "network_get"}}})})
	m := New(cfg, Options{})
	defer m.Close()
	if st := m.Status(); st.Servers[0].State != "not_started" || len(mcptest.Processes(mark)) != 0 {
		t.Fatalf("started before any listing: %+v", st)
	}
	ts := m.Tools()
	if len(mcptest.Processes(mark)) != 1 {
		t.Fatalf("server processes after the listing: %v", mcptest.Processes(mark))
	}
	echo, add, pic := find(ts, "mcp__t__echo"), find(ts, "mcp__t__add"), find(ts, "mcp__t__picture")
	if echo == nil || add == nil || pic == nil {
		t.Fatalf("tools: %v", ts)
	}
	if echo.Risk() != tools.ReadOnly || add.Risk() != tools.NetworkGet {
		t.Fatalf("risks: echo %v add %v", echo.Risk(), add.Risk())
	}
	if !strings.Contains(string(echo.Schema()), `"text"`) || !strings.Contains(string(echo.Schema()), `"additionalProperties":false`) {
		t.Fatalf("echo's schema: %s", echo.Schema())
	}
	if res := call(t, echo, `{"text":"hi"}`); res.IsError || res.Text != "echo: hi" {
		t.Fatalf("echo: %+v", res)
	}
	if res := call(t, add, `{"a":2,"b":40}`); res.Text != "42" {
		t.Fatalf("add: %+v", res)
	}
	for args, want := range map[string]string{`{"a":2}`: `missing properties: ["b"]`, `{"a":2,"b":"x"}`: `argument b: type`, `{"a":1,"b":2,"c":3}`: `unexpected additional properties ["c"]`} {
		if res := call(t, add, args); !res.IsError || !strings.Contains(res.Text, want) {
			t.Errorf("add %s: %+v, want %q", args, res, want)
		}
	}
	if res := call(t, pic, `{}`); len(res.Images) != 1 || res.Images[0].MediaType != "image/png" || len(res.Images[0].Data) < 50 {
		t.Fatalf("picture: %+v", res)
	}
	st := m.Status()
	if s := st.Servers[0]; s.State != "running" || s.PID == 0 || len(s.Tools) != 5 {
		t.Fatalf("status: %+v", s)
	}
	m.Close()
	waitGone(t, mark)
	if res := call(t, echo, `{"text":"hi"}`); !res.IsError || !strings.Contains(res.Text, "is not running") {
		t.Fatalf("call after close: %+v", res)
	}
}

// A missing command, a server that answers garbage, one that never answers, and one whose
// error output holds its token are each reported (without the token); the good one works.
func TestBrokenServersAreReportedAndTheRestWork(t *testing.T) {
	cfg, mark := t.TempDir(), marker(t)
	writeConfig(t, cfg, map[string]any{
		"good":    stdio(mcptest.Serve, mark, nil),
		"missing": map[string]any{"command": "/nonexistent/mcp-server"},
		"garbage": stdio(mcptest.Garbage, mark, nil),
		"silent":  stdio(mcptest.Silent, mark, nil),
		"leak":    stdio(mcptest.Leak, mark, map[string]any{"env": map[string]string{"MCPTEST_TOKEN": "tok-s3cr3t-value"}}),
		"web":     map[string]any{"url": "http://127.0.0.1:1/mcp", "headers": map[string]string{"Authorization": "Bearer hdr-s3cr3t-value"}},
	})
	m := New(cfg, Options{StartTimeout: 3 * time.Second})
	defer m.Close()
	start := time.Now()
	ts := m.Tools()
	took := time.Since(start)
	if find(ts, "mcp__good__echo") == nil || len(ts) != 5 {
		t.Fatalf("tools: %d", len(ts))
	}
	if res := call(t, find(ts, "mcp__good__echo"), `{"text":"still here"}`); res.Text != "echo: still here" {
		t.Fatalf("echo: %+v", res)
	}
	if took > 6*time.Second {
		t.Errorf("the first listing took %v: the servers should start at once, each bounded", took)
	}
	problems := strings.Join(m.Problems(), "\n")
	for _, want := range []string{
		`MCP server missing did not start (command "/nonexistent/mcp-server" not found`,
		"MCP server garbage did not start",
		"MCP server silent did not start (it did not answer within 3s)",
		"MCP server leak did not start",
		"MCP server web did not start",
	} {
		if !strings.Contains(problems, want) {
			t.Errorf("problems lack %q:\n%s", want, problems)
		}
	}
	st, _ := json.Marshal(m.Status())
	for _, secret := range []string{"tok-s3cr3t-value", "hdr-s3cr3t-value"} {
		if strings.Contains(problems, secret) || strings.Contains(string(st), secret) {
			t.Errorf("%s leaked:\n%s\n%s", secret, problems, st)
		}
	}
	if !strings.Contains(problems, "auth failed for token ••••••") {
		t.Errorf("the leak server's error output should show, masked:\n%s", problems)
	}
	if !strings.Contains(string(st), `"Authorization":"••••••"`) || !strings.Contains(string(st), `"MCPTEST_TOKEN":"••••••"`) {
		t.Errorf("status should name the env and headers with masked values: %s", st)
	}
	m.Close()
	waitGone(t, mark)
}

// A server that crashes is reported and its tools go; a call that hangs ends at its bound.
func TestCrashAndHangAreReported(t *testing.T) {
	cfg, mark := t.TempDir(), marker(t)
	writeConfig(t, cfg, map[string]any{"t": stdio(mcptest.Serve, mark, nil)})
	m := New(cfg, Options{CallTimeout: time.Second})
	defer m.Close()
	ts := m.Tools()
	start := time.Now()
	if res := call(t, find(ts, "mcp__t__hang"), `{}`); !res.IsError || !strings.Contains(res.Text, "did not answer hang within 1s") {
		t.Fatalf("hang: %+v", res)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("hang took %v", took)
	}
	if res := call(t, find(ts, "mcp__t__crash"), `{}`); !res.IsError {
		t.Fatalf("crash: %+v", res)
	}
	var problems string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		problems = strings.Join(m.Problems(), "\n")
		if problems != "" {
			break
		}
	}
	if !strings.Contains(problems, "MCP server t stopped (it exited") || !strings.Contains(problems, "crashing on purpose") {
		t.Fatalf("problems: %q", problems)
	}
	if got := m.Tools(); len(got) != 0 {
		t.Fatalf("a crashed server's tools are still offered: %v", got)
	}
	waitGone(t, mark)
}

// A file that is not JSON is one error with its line; a wrong entry is reported with its
// field and the others run.
func TestBadConfigNamesFileLineAndField(t *testing.T) {
	cfg, mark := t.TempDir(), marker(t)
	path := filepath.Join(cfg, FileName)
	os.WriteFile(path, []byte("{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\",}\n  }\n}\n"), 0o600)
	m := New(cfg, Options{})
	defer m.Close()
	if p := strings.Join(m.Problems(), "\n"); !strings.Contains(p, path+":3: not valid JSON") {
		t.Fatalf("problems: %q", p)
	}
	cmd, args := mcptest.ServerArgs(mcptest.Serve, mark)
	data, _ := json.MarshalIndent(map[string]any{"mcpServers": map[string]any{
		"ok":   map[string]any{"command": cmd, "args": args},
		"bad":  map[string]any{"command": "x", "risk": "huge"},
		"both": map[string]any{"command": "x", "url": "http://x"},
		"a__b": map[string]any{"command": "x"},
		"tool": map[string]any{"command": "x", "tools": map[string]any{"t": map[string]any{"risk": "nope"}}},
		"typo": map[string]any{"comand": "x"},
		"port": map[string]any{"command": "x", "args": "--fast"},
	}, "globalShortcut": "Ctrl+Space"}, "", "  ")
	os.WriteFile(path, data, 0o600)
	time.Sleep(rescanEvery)
	if n := len(m.Tools()); n != 5 {
		t.Fatalf("ok's tools: %d (%v)", n, m.Problems())
	}
	p := strings.Join(m.Problems(), "\n")
	for _, want := range []string{
		`mcpServers.bad.risk: unknown risk "huge"`,
		`mcpServers.both: give "command" or "url", not both`,
		`mcpServers.a__b: a server name is letters`,
		`mcpServers.tool.tools.t.risk: unknown risk "nope"`,
		`mcpServers.typo.comand: unknown field`,
		`mcpServers.port.args: should be []string, got string`,
	} {
		if !strings.Contains(p, want) {
			t.Errorf("problems lack %q:\n%s", want, p)
		}
	}
	// Removing a server from the file ends it.
	writeConfig(t, cfg, map[string]any{})
	time.Sleep(rescanEvery)
	if n := len(m.Tools()); n != 0 {
		t.Fatalf("tools after the server was removed: %d", n)
	}
	waitGone(t, mark)
}

// A streamable-HTTP server gets its headers on every request, and they never show.
func TestStreamableHTTPServerWithHeaders(t *testing.T) {
	server := mcptest.NewServer()
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer http-s3cr3t" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	cfg := t.TempDir()
	writeConfig(t, cfg, map[string]any{
		"web":   map[string]any{"url": srv.URL, "headers": map[string]string{"Authorization": "Bearer http-s3cr3t"}, "risk": "network_get"},
		"nokey": map[string]any{"url": srv.URL},
	})
	m := New(cfg, Options{StartTimeout: 5 * time.Second})
	defer m.Close()
	ts := m.Tools()
	echo := find(ts, "mcp__web__echo")
	if echo == nil || echo.Risk() != tools.NetworkGet {
		t.Fatalf("tools: %v problems: %v", ts, m.Problems())
	}
	if res := call(t, echo, `{"text":"over http"}`); res.Text != "echo: over http" {
		t.Fatalf("echo: %+v", res)
	}
	p := strings.Join(m.Problems(), "\n")
	if !strings.Contains(p, "MCP server nokey did not start") || strings.Contains(p, "http-s3cr3t") {
		t.Fatalf("problems: %q", p)
	}
}

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

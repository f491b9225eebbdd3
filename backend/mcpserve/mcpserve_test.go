package mcpserve_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/mcpserve"
	"github.com/clusterspace/clusterspace/backend/mcpserve/mcpservetest"
	"github.com/clusterspace/clusterspace/backend/tools"
)

type paneArgs struct {
	PaneID string `json:"pane_id" desc:"the pane"`
}

// rig is a registry with two tools by the names the server offers, counting their runs.
func denyAll(agent.Approval) (agent.ApprovalStatus, string, bool) {
	return agent.ApprovalDeny, "no one can approve calls in this session", true
}

type rig struct {
	reg          *tools.Registry
	reads, typed atomic.Int32
}

func newRig() *rig {
	r := &rig{reg: tools.NewRegistry()}
	r.reg.Register(
		tools.New("list_panes", "List the panes.", tools.ReadOnly, func(context.Context, tools.Call, struct{}) (tools.Result, error) {
			r.reads.Add(1)
			return tools.Result{Text: `{"items":[{"pane_id":"p1"}]}`}, nil
		}),
		tools.New("write_to_terminal", "Type into a pane.", tools.WriteLocal, func(_ context.Context, _ tools.Call, p paneArgs) (tools.Result, error) {
			r.typed.Add(1)
			return tools.Result{Text: "typed into " + p.PaneID}, nil
		}),
		// Not offered: a goal's own bookkeeping means nothing to an MCP client.
		tools.New("claim_complete", "Claim.", tools.ReadOnly, func(context.Context, tools.Call, struct{}) (tools.Result, error) {
			return tools.Result{}, nil
		}),
	)
	return r
}

// connect serves srv to an SDK client in memory, as a real client would see it.
func connect(t *testing.T, srv *sdk.Server) *sdk.ClientSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	st, ct := sdk.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait(); cancel() })
	return cs
}

var text = mcpservetest.Text

func call(t *testing.T, cs *sdk.ClientSession, name string, args any) *sdk.CallToolResult {
	t.Helper()
	return mcpservetest.Call(t, context.Background(), cs, name, args)
}

func TestACallAboveTheCeilingIsRefusedWhenNoOneCanApprove(t *testing.T) {
	r := newRig()
	deny := agent.NewApprovals(nil, denyAll)
	svc := mcpserve.New(mcpserve.Deps{Registry: r.reg, Approvals: deny})
	cs := connect(t, svc.Server(mcpserve.Client{Name: "t", Ceiling: tools.ReadOnly}, "test"))

	var names []string
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	if strings.Join(names, ",") != "list_panes,write_to_terminal" {
		t.Fatalf("offered %v, want list_panes and write_to_terminal only", names)
	}
	if res := call(t, cs, "list_panes", map[string]any{}); res.IsError || !strings.Contains(text(res), "p1") {
		t.Fatalf("list_panes: %+v %q", res, text(res))
	}
	res := call(t, cs, "write_to_terminal", map[string]any{"pane_id": "p1"})
	msg := text(res)
	if !res.IsError || !strings.Contains(msg, "write_to_terminal is write_local, above this client's ceiling read_only") ||
		!strings.Contains(msg, "no one can approve calls in this session") {
		t.Fatalf("write_to_terminal: error %v, %q", res.IsError, msg)
	}
	if r.typed.Load() != 0 || r.reads.Load() != 1 {
		t.Fatalf("ran: typed %d, read %d; want 0 and 1", r.typed.Load(), r.reads.Load())
	}
}

func TestACallAboveTheCeilingWaitsForThePersonsAnswer(t *testing.T) {
	r := newRig()
	desk := agent.NewApprovals(nil, nil)
	svc := mcpserve.New(mcpserve.Deps{Registry: r.reg, Approvals: desk})
	cs := connect(t, svc.Server(mcpserve.Client{Name: "claude-in-p1", Ceiling: tools.ReadOnly}, "test"))
	answered := make(chan agent.Approval, 1)
	go func() {
		// The person answers in the app: the request is on the desk, naming the client.
		for range 200 {
			if w := desk.Waiting(nil); len(w) == 1 {
				a, _ := desk.Answer(context.Background(), w[0].ID, agent.ApprovalAllowOnce, "")
				answered <- a
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		close(answered)
	}()
	res := call(t, cs, "write_to_terminal", map[string]any{"pane_id": "p1"})
	a, ok := <-answered
	if !ok {
		t.Fatal("no approval request reached the desk")
	}
	if res.IsError || text(res) != "typed into p1" || r.typed.Load() != 1 {
		t.Fatalf("after approval: %v %q typed %d", res.IsError, text(res), r.typed.Load())
	}
	if a.Tool != "write_to_terminal" || a.Risk != "write_local" || !strings.HasPrefix(a.Reason, "MCP client claude-in-p1: ") {
		t.Fatalf("approval request %+v", a)
	}
}

// newToken is the token store of dataDir with one token made in it: the store and the token.
func newToken(t *testing.T, dataDir, name string, risk tools.Risk, paneID string) (*mcpserve.Tokens, string) {
	t.Helper()
	ts := mcpserve.NewTokens(dataDir)
	tok, err := ts.Create(name, risk, paneID)
	if err != nil {
		t.Fatal(err)
	}
	return ts, tok
}

func TestTokensAreShownOnceAndStoredHashed(t *testing.T) {
	dir := t.TempDir()
	ts, tok := newToken(t, dir, "codex", tools.WriteLocal, "p2")
	if _, err := ts.Create("codex", tools.ReadOnly, ""); err == nil || !strings.Contains(err.Error(), "revoke it first") {
		t.Fatalf("a second token of one name: %v", err)
	}
	if _, err := ts.Create("bad name!", tools.ReadOnly, ""); err == nil || !strings.Contains(err.Error(), `name "bad name!"`) {
		t.Fatalf("a bad name: %v", err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, mcpserve.TokensFile))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), tok) {
		t.Fatal("the token file holds the token itself")
	}
	if info, _ := os.Stat(filepath.Join(dir, mcpserve.TokensFile)); info.Mode().Perm() != 0o600 {
		t.Fatalf("token file mode %v, want 0600", info.Mode().Perm())
	}
	c, ok := ts.Check(tok)
	if !ok || c.Name != "codex" || c.Risk != tools.WriteLocal || c.PaneID != "p2" {
		t.Fatalf("check: %+v %v", c, ok)
	}
	if _, ok := ts.Check(tok + "0"); ok {
		t.Fatal("a wrong token passed")
	}
	if err := ts.Revoke("codex"); err != nil {
		t.Fatal(err)
	}
	if _, ok := ts.Check(tok); ok {
		t.Fatal("a revoked token passed")
	}
}

func TestHTTPNeedsAValidToken(t *testing.T) {
	ts, tok := newToken(t, t.TempDir(), "ci", tools.ReadOnly, "")
	r := newRig()
	svc := mcpserve.New(mcpserve.Deps{Registry: r.reg, Approvals: agent.NewApprovals(nil, denyAll)})
	srv := httptest.NewServer(svc.Handler(ts, "test", false))
	defer srv.Close()
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	for name, auth := range map[string]string{"no token": "", "a wrong token": "Bearer csmcp_00", "a login-style header": "Basic eDp5"} {
		resp := mcpservetest.Post(t, srv.URL, auth, init)
		if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("%s: status %d, want 401 with WWW-Authenticate", name, resp.StatusCode)
		}
	}
	// The control: the same request with the client's own token is answered.
	if resp := mcpservetest.Post(t, srv.URL, "Bearer "+tok, init); resp.StatusCode != http.StatusOK {
		t.Errorf("with the client's token: status %d, want 200", resp.StatusCode)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "ci"}, nil).Connect(context.Background(),
		&sdk.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: &http.Client{Transport: mcpservetest.Bearer(tok)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res := call(t, cs, "list_panes", map[string]any{})
	if res.IsError {
		t.Fatalf("list_panes with a token: %q", text(res))
	}
	// The token's ceiling holds over HTTP too.
	if res := call(t, cs, "write_to_terminal", json.RawMessage(`{"pane_id":"p1"}`)); !res.IsError || r.typed.Load() != 0 {
		t.Fatalf("write_to_terminal over a read_only token ran or was not refused: %q", text(res))
	}
}

// secretField is a tool whose calls the person confirms whatever the ceiling (tools.Confirmer).
type secretField struct{ tools.Tool }

func (secretField) Confirm(context.Context, json.RawMessage) string {
	return "it types into a password field"
}

func TestACallThePersonConfirmsIsAskedWhateverTheCeiling(t *testing.T) {
	r := newRig()
	r.reg.Register(secretField{tools.New("browser_type", "Type.", tools.NetworkWrite, func(context.Context, tools.Call, struct{}) (tools.Result, error) {
		return tools.Result{Text: "typed"}, nil
	})})
	svc := mcpserve.New(mcpserve.Deps{Registry: r.reg, Approvals: agent.NewApprovals(nil, denyAll)})
	cs := connect(t, svc.Server(mcpserve.Client{Name: "t", Ceiling: tools.SpendsMoney}, "test"))
	if res := call(t, cs, "browser_type", map[string]any{}); !res.IsError || !strings.Contains(text(res), "it types into a password field") {
		t.Fatalf("browser_type at the top ceiling: error %v, %q", res.IsError, text(res))
	}
}

func TestAPanesTokensEndWithIt(t *testing.T) {
	dir := t.TempDir()
	ts := mcpserve.NewTokens(dir)
	if err := ts.RevokePane("p1"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, mcpserve.TokensFile)); !os.IsNotExist(err) {
		t.Fatalf("revoking no token wrote the file: %v", err)
	}
	pc, err := mcpserve.ClientConfig(dir, "p1")
	if err != nil {
		t.Fatal(err)
	}
	again, err := mcpserve.ClientConfig(dir, "p1") // a new goal in the pane: a new token
	if err != nil {
		t.Fatal(err)
	}
	tok, tok2 := pc.Env[mcpserve.TokenEnv], again.Env[mcpserve.TokenEnv]
	if _, ok := ts.Check(tok); ok {
		t.Fatal("the pane's earlier token still works")
	}
	if c, ok := ts.Check(tok2); !ok || c.PaneID != "p1" || c.Risk != tools.ReadOnly || c.Name != "pane-p1" {
		t.Fatalf("the pane's token: %+v %v", c, ok)
	}
	if err := ts.RevokePane("p1"); err != nil {
		t.Fatal(err)
	}
	if _, ok := ts.Check(tok2); ok {
		t.Fatal("the removed pane's token still works")
	}
}

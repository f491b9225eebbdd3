// Package mcpserve is ClusterSpace as an MCP server: any agent, in a pane or outside, uses the
// workspace's tools (the panes, the terminals, the browser, goals, its own fleet task) under
// the same policy and approval desk as the built-in agent. `clusterspace mcp` serves it over
// stdio, `serve` over streamable HTTP at /mcp with a token per client, and the owner of a data
// dir on a Unix socket in it for `clusterspace mcp` to attach to. (backend/mcp is the other
// direction: ClusterSpace using others' MCP servers.)
package mcpserve

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/goal"
	"github.com/clusterspace/clusterspace/backend/policy"
	"github.com/clusterspace/clusterspace/backend/tools"
	"github.com/clusterspace/clusterspace/backend/workspace"
)

// approvalPrefix starts the ids of the MCP clients' approval requests.
const approvalPrefix = "appr-mcp-"

// ServerName is the name the server gives in its MCP handshake.
const ServerName = "clusterspace"

// Exposed are the engine's tools an MCP client is offered, besides the browser tools (every
// browser_* tool is) and this package's own (goals.go). The goal bookkeeping tools are not:
// they act on the running goal of the agent that calls them, which an MCP client is not.
var Exposed = []string{
	"list_panes", "capture_screenshot", "focus_pane",
	"write_to_terminal", "read_terminal_output", "poll_terminal_status", "wait_for_output",
	"switch_terminal_tab", "open_browser_tab", "switch_browser_tab", "close_browser_tab",
}

// Deps are what the server answers from: the engine's services.
type Deps struct {
	Registry *tools.Registry
	// Approvals is the app's one approval desk: a call above a client's ceiling waits there
	// for the person (or its auto answer, the CLI's --approve deny).
	Approvals  *agent.Approvals
	Workspaces *workspace.Service
	Goals      *goal.Service
	Logger     *slog.Logger
}

// Client is who calls: what a token says, or the flags of `clusterspace mcp`.
type Client struct {
	Name string
	// Ceiling is the highest risk the client's calls run at without asking the person.
	Ceiling tools.Risk
	// PaneID is the pane the client's agent runs in ("" none).
	PaneID string
}

// Service builds an MCP server per client over the engine's tools.
type Service struct {
	deps Deps
	own  []tools.Tool
}

// New returns the service; d.Registry and d.Approvals are required.
func New(d Deps) *Service {
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	s := &Service{deps: d}
	s.own = s.goalTools()
	s.closeStale(context.Background())
	return s
}

// closeStale withdraws the MCP clients' questions a stopped process left pending: their
// clients are gone, and nobody could answer them. Only the data dir's owner builds a Service.
func (s *Service) closeStale(ctx context.Context) {
	if s.deps.Approvals == nil {
		return
	}
	stale, err := s.deps.Approvals.Stored(ctx, func(a agent.Approval) bool { return strings.HasPrefix(a.ID, approvalPrefix) })
	if err != nil {
		s.deps.Logger.Warn("could not read the MCP clients' stale approvals", "err", err)
		return
	}
	for _, a := range stale {
		s.deps.Approvals.Withdraw(ctx, a, "the app stopped while the MCP client waited")
	}
}

// Tools lists what a client is offered, sorted by name.
func (s *Service) Tools() []tools.Tool {
	var out []tools.Tool
	for _, name := range s.deps.Registry.Names() {
		if !slices.Contains(Exposed, name) && !strings.HasPrefix(name, "browser_") {
			continue
		}
		if t, ok := s.deps.Registry.Get(name); ok {
			out = append(out, t)
		}
	}
	out = append(out, s.own...)
	slices.SortFunc(out, func(a, b tools.Tool) int { return strings.Compare(a.Name(), b.Name()) })
	return out
}

// Server is the MCP server one client talks to: every tool of Tools, each call decided for c.
func (s *Service) Server(c Client, version string) *sdk.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: ServerName, Title: "ClusterSpace", Version: version},
		&sdk.ServerOptions{Instructions: "The tools of a ClusterSpace workspace: its panes, terminals and browsers, goals, " +
			"and the fleet task of your pane. Calls above your risk ceiling wait for the person's approval in the app."})
	for _, t := range s.Tools() {
		risk := t.Risk()
		srv.AddTool(&sdk.Tool{Name: t.Name(), Description: t.Description(), InputSchema: json.RawMessage(t.Schema()),
			Annotations: &sdk.ToolAnnotations{ReadOnlyHint: risk == tools.ReadOnly, Title: t.Name() + " (" + risk.String() + ")"}},
			func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return toMCP(s.Call(ctx, c, t, req.Params.Arguments)), nil
			})
	}
	return srv
}

// Call decides one call for c as the built-in agent's are decided (the policy with c's
// ceiling; an Ask waits at the approval desk) and runs it. A refusal is a result the client's
// model can act on, naming why and what to do.
func (s *Service) Call(ctx context.Context, c Client, t tools.Tool, args json.RawMessage) (tools.Result, error) {
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	call := tools.Call{ID: agent.NewID("mcp-"), Name: t.Name(), Args: args, PaneID: c.PaneID}
	if c.PaneID == "" {
		call.WorkspaceID = s.activeWorkspace(ctx)
	}
	v := policy.Decider{Policy: policy.Policy{Ceiling: c.Ceiling}, Rules: []policy.Rule{confirmFirst}}.Decide(ctx, t, call)
	reason := strings.ReplaceAll(v.Reason, "this goal's", "this client's")
	switch v.Decision {
	case policy.Deny:
		return tools.Errorf("%s was refused: %s.", t.Name(), reason), nil
	case policy.Ask:
		ans, err := s.ask(ctx, c, t, call, reason)
		if err != nil {
			return tools.Errorf("%s was not run: %v", t.Name(), err), nil
		}
		if ans.Status == agent.ApprovalDeny {
			why := ans.AnswerReason
			if why == "" {
				why = "the person denied it"
			}
			return tools.Errorf("%s was refused: %s, and it was not approved (%s). Do not retry it as is: "+
				"ask the person to raise this client's risk ceiling (clusterspace mcp --risk, or a token made with --risk) "+
				"or to approve it in the app.", t.Name(), reason, why), nil
		}
	}
	s.deps.Logger.Info("mcp call", "client", c.Name, "tool", t.Name(), "decision", v.Decision.String())
	res, err := t.Run(withCeiling(ctx, c.Ceiling), call)
	if err != nil {
		return tools.Result{}, err
	}
	if m := agent.MaskerOf(s.deps.Registry); m != nil {
		res.Text = m.Mask(res.Text) // the secrets the app holds stay in the app
	}
	return res, nil
}

// confirmFirst asks the person before a call they should see whatever the ceiling (typing
// into a password field, uploading files: tools.Confirmer), as the chat does: a client is not
// the person, whatever its token allows.
func confirmFirst(ctx context.Context, t tools.Tool, call tools.Call) (policy.Verdict, bool) {
	if c, ok := t.(tools.Confirmer); ok {
		if why := c.Confirm(ctx, call.Args); why != "" {
			return policy.Verdict{Decision: policy.Ask, Reason: why}, true
		}
	}
	return policy.Verdict{}, false
}

// ask puts the call on the approval desk and waits for the answer, as the agent does; a wait
// cut off (the client went away) withdraws the question.
func (s *Service) ask(ctx context.Context, c Client, t tools.Tool, call tools.Call, reason string) (agent.Approval, error) {
	if s.deps.Approvals == nil {
		return agent.Approval{}, fmt.Errorf("%s, and no one can approve it here", reason)
	}
	risk, _ := tools.RiskOf(t, call.Args)
	args := call.Args
	if m := agent.MaskerOf(s.deps.Registry); m != nil {
		args = json.RawMessage(m.Mask(string(args)))
	}
	// The request belongs to the workspace the client works in (its pane's, else the one the
	// window shows), and to no goal or conversation: the app lists it with the goals' questions.
	ws := call.WorkspaceID
	if c.PaneID != "" && s.deps.Workspaces != nil {
		if w, _, err := s.deps.Workspaces.Find(ctx, c.PaneID); err == nil {
			ws = w.ID
		}
	}
	req := agent.Approval{ID: agent.NewID(approvalPrefix), WorkspaceID: ws, CallID: call.ID, Tool: t.Name(), Args: args, Risk: risk.String(),
		Reason: fmt.Sprintf("MCP client %s: %s", c.Name, reason), CreatedAt: time.Now().UTC()}
	wait, err := s.deps.Approvals.Open(ctx, req)
	if err != nil {
		return req, err
	}
	ans, err := wait(ctx)
	if err != nil {
		s.deps.Approvals.Withdraw(ctx, ans, "the MCP client stopped waiting")
		return ans, fmt.Errorf("the client stopped waiting for the person's approval (%v); call it again to ask again", err)
	}
	return ans, nil
}

// activeWorkspace is the workspace a client with no pane works in: the one the window shows.
func (s *Service) activeWorkspace(ctx context.Context) string {
	if s.deps.Workspaces == nil {
		return ""
	}
	list, err := s.deps.Workspaces.List(ctx)
	if err != nil {
		return ""
	}
	return list.ActiveID
}

// toMCP turns a tool's result (or a failure of the machine) into MCP's.
func toMCP(r tools.Result, err error) *sdk.CallToolResult {
	if err != nil {
		return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "the tool failed: " + err.Error()}}}
	}
	out := &sdk.CallToolResult{IsError: r.IsError, Content: []sdk.Content{&sdk.TextContent{Text: r.Text}}}
	for _, img := range r.Images {
		out.Content = append(out.Content, &sdk.ImageContent{Data: img.Data, MIMEType: img.MediaType})
	}
	return out
}

package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/config"
	"github.com/clusterspace/clusterspace/backend/engine"
	"github.com/clusterspace/clusterspace/backend/keyenv"
	"github.com/clusterspace/clusterspace/backend/mcpserve"
	"github.com/clusterspace/clusterspace/backend/tools"
)

// McpHelp is what `clusterspace mcp --help` prints.
const McpHelp = `Usage: clusterspace mcp [options]
       clusterspace mcp token create NAME [--risk LEVEL] [--pane PANE_ID] [--data-dir DIR]
       clusterspace mcp token list|revoke NAME [--data-dir DIR]
  Serves ClusterSpace as an MCP server on stdin and stdout, for any agent: the panes, the
  terminals, the browser tools, goals, and the fleet task of the agent's own pane. Every call
  is decided by the same policy as the built-in agent's.

  If the desktop window or serve owns the data dir, it attaches to that app: calls run there,
  at the ceiling of the token in $CLUSTERSPACE_MCP_TOKEN (read_only without one), and a call
  above it waits for the person's answer in the app. Otherwise it opens the data dir itself,
  with --risk as the ceiling and --approve for the calls above it.

Options (when it opens the data dir itself):
  --risk LEVEL      the ceiling: read_only (default), write_local, network_get,
                    network_write, spends_money
  --approve MODE    a call above the ceiling: deny (default) refuses it with the policy's
                    reason; ask asks on this terminal (/dev/tty)
  --pane PANE_ID    the pane the client works from (its workspace for the pane tools)
  --data-dir DIR    data directory (as for the desktop window)
  --config-dir DIR  config directory (as for the desktop window)

Tokens, one per client, for serve's /mcp (Authorization: Bearer TOKEN) and for attaching:
  token create NAME  prints a new token once (only its hash is kept); --risk sets its
                     ceiling (default read_only), --pane the pane its agent runs in
  token list         the clients: name, ceiling, pane, created
  token revoke NAME  the token stops working at once

Exit status: 0 the client closed the stream, 1 runtime error, 64 bad usage.
`

// Mcp runs `clusterspace mcp`; version is the binary's, for the MCP handshake.
func Mcp(args []string, version string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "token" {
		return mcpToken(args[1:], stdout, stderr)
	}
	fs := newFlagSet("mcp")
	riskFlag := fs.String("risk", "", "")
	approve := fs.String("approve", "deny", "")
	pane := fs.String("pane", "", "")
	dataDir := fs.String("data-dir", "", "")
	configDir := fs.String("config-dir", "", "")
	err := fs.Parse(args)
	if helpAsked(err, McpHelp, stdout) {
		return ExitOK
	}
	if err == nil && fs.NArg() > 0 {
		err = fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	risk := tools.ReadOnly
	if err == nil && *riskFlag != "" {
		risk, err = tools.ParseRisk(*riskFlag)
		if err != nil {
			err = fmt.Errorf("--risk: %w", err)
		}
	}
	var auto agent.AutoAnswer
	if err == nil {
		auto, err = ttyApprover(*approve)
	}
	if err != nil {
		fmt.Fprintf(stderr, "clusterspace mcp: %v\n\n%s", err, McpHelp)
		return ExitUsage
	}
	ctx, stop := interruptible()
	defer stop()
	eng, err := engine.Open(ctx, *dataDir, engine.WithCommand("mcp"), engine.WithConfigDir(*configDir),
		engine.WithLogger(warnLogger(stderr)), engine.WithAutoApprove(auto))
	var inUse *config.InUseError
	if errors.As(err, &inUse) {
		// The owner decides: its policy and its window's approvals, the token's ceiling.
		if *riskFlag != "" || *pane != "" {
			fmt.Fprintln(stderr, "clusterspace mcp: attaching to the app that owns the data dir: --risk and --pane are the token's there, not flags'")
		}
		token, _ := keyenv.Lookup(mcpserve.TokenEnv)
		err = mcpserve.Attach(ctx, inUse.Dir, token, version, os.Stdin, os.Stdout)
		return mcpEnded(err, stderr)
	}
	if err != nil {
		fmt.Fprintf(stderr, "clusterspace mcp: %v\n", err)
		return ExitFor(err)
	}
	defer eng.Close()
	svc := mcpserve.New(mcpserve.Deps{Registry: eng.Registry, Approvals: eng.Approvals, Workspaces: eng.Workspaces,
		Goals: eng.Goals, Logger: warnLogger(stderr)})
	srv := svc.Server(mcpserve.Client{Name: "stdio", Ceiling: risk, PaneID: *pane}, version)
	return mcpEnded(srv.Run(ctx, &sdk.StdioTransport{}), stderr)
}

// mcpEnded is the exit status of a stdio session: the client closing the stream, or a signal,
// is the normal end.
func mcpEnded(err error, stderr io.Writer) int {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
		return ExitOK
	}
	fmt.Fprintf(stderr, "clusterspace mcp: %v\n", err)
	return ExitError
}

// mcpToken runs `clusterspace mcp token create|list|revoke`. The token file lives in the data
// dir beside the owner, so these work while the app runs.
func mcpToken(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stdout, McpHelp)
		return ExitOK
	}
	verb := args[0]
	fs := newFlagSet("mcp token")
	riskFlag := fs.String("risk", "read_only", "")
	pane := fs.String("pane", "", "")
	dataDir := fs.String("data-dir", "", "")
	name, err := parseWithArg(fs, args[1:])
	if helpAsked(err, McpHelp, stdout) {
		return ExitOK
	}
	if err == nil && name == "" && verb != "list" {
		err = fmt.Errorf("name the client: clusterspace mcp token %s NAME", verb)
	}
	risk, rerr := tools.ParseRisk(*riskFlag)
	if err == nil && rerr != nil {
		err = fmt.Errorf("--risk: %w", rerr)
	}
	if err != nil {
		fmt.Fprintf(stderr, "clusterspace mcp token: %v\n", err)
		return ExitUsage
	}
	dir, err := config.ResolveDataDir(*dataDir)
	if err == nil {
		err = config.EnsureDataDir(dir, warnLogger(stderr))
	}
	if err != nil {
		fmt.Fprintf(stderr, "clusterspace mcp token: %v\n", err)
		return ExitFor(err)
	}
	ts := mcpserve.NewTokens(dir)
	switch verb {
	case "create":
		token, err := ts.Create(name, risk, *pane)
		if err != nil {
			fmt.Fprintf(stderr, "clusterspace mcp token create: %v\n", err)
			return ExitUsage
		}
		fmt.Fprintln(stdout, token)
		fmt.Fprintf(stderr, "The token of %s (ceiling %s) is shown only this once; only its hash is kept.\n", name, risk)
		return ExitOK
	case "list":
		list, err := ts.List()
		if err != nil {
			fmt.Fprintf(stderr, "clusterspace mcp token list: %v\n", err)
			return ExitError
		}
		w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "NAME\tRISK\tPANE\tCREATED")
		for _, t := range list {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", t.Name, t.Risk, t.PaneID, t.CreatedAt.Local().Format("2006-01-02 15:04"))
		}
		w.Flush()
		return ExitOK
	case "revoke":
		if err := ts.Revoke(name); err != nil {
			fmt.Fprintf(stderr, "clusterspace mcp token revoke: %v\n", err)
			return ExitUsage
		}
		fmt.Fprintf(stdout, "Revoked the token of %s.\n", name)
		return ExitOK
	default:
		fmt.Fprintf(stderr, "clusterspace mcp token: unknown command %q: use create, list or revoke\n", verb)
		return ExitUsage
	}
}

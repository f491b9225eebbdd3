package engine

import (
	"os"
	"strings"

	"github.com/clusterspace/clusterspace/backend/agentpane"
	"github.com/clusterspace/clusterspace/backend/mcpserve"
)

// OfferMCP says this door serves MCP on the data dir's socket (mcpserve.ListenLocal: serve and
// the window do), so the agents in goals' panes get ClusterSpace's MCP server configured.
func (e *Engine) OfferMCP() { e.mcpOffered.Store(true) }

// paneMCP is ClusterSpace's MCP server as the agent in a goal's pane starts it: this program's
// `mcp` attached to this engine through the data dir's socket, with a token of the pane's own
// (read_only; above it the person is asked). nil when it cannot be reached from the pane: this
// door serves no socket (the CLI's), a confined goal's sandbox hides the data dir and so the
// socket, and a test binary is not this program (it would run its tests again in the agent's
// MCP server process).
func (e *Engine) paneMCP(paneID string, confined bool) *agentpane.MCPServer {
	exe, err := os.Executable()
	if !e.mcpOffered.Load() || confined || err != nil || strings.HasSuffix(exe, ".test") {
		return nil
	}
	pc, err := mcpserve.ClientConfig(e.DataDir, paneID)
	if err != nil {
		e.bounds.log.Warn("the agent pane gets no ClusterSpace MCP server", "pane", paneID, "err", err)
		return nil
	}
	return &agentpane.MCPServer{Command: pc.Command, Args: pc.Args, Env: pc.Env}
}

// revokePaneMCP ends the MCP token of a removed pane's agent: nothing runs there any more.
func (e *Engine) revokePaneMCP(paneID string) {
	if err := mcpserve.NewTokens(e.DataDir).RevokePane(paneID); err != nil {
		e.bounds.log.Warn("the removed pane's MCP token stays until revoked", "pane", paneID, "err", err)
	}
}

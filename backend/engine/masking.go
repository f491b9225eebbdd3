package engine

import (
	"log/slog"
	"os"

	"github.com/clusterspace/clusterspace/backend/agent"
	"github.com/clusterspace/clusterspace/backend/secrets"
)

// newMasker is the engine's one secrets.Masker, and the logger every service gets wrapped in
// it, so no log line holds a secret either. It already hides the API keys of this process's
// environment that the door named (the CLI's --api-key-env): they never reach the vault, but
// an MCP server, which inherits the environment, could hand them on. The vault teaches it the
// rest when it opens (secrets.Options.Masker); maskTools hands it to the agents.
func newMasker(o *options) *secrets.Masker {
	m := secrets.NewMasker()
	for _, name := range o.hiddenEnv {
		m.Hold(os.Getenv(name), "API key "+name)
	}
	o.logger = slog.New(m.LogHandler(o.logger.Handler()))
	return m
}

// maskTools makes every goal, chat and fleet task mask what its tool calls record, publish and
// return (agent.SetMasker: the registry is what all of them share), with mcp.json's env and
// header values among the secrets, as last loaded.
func (e *Engine) maskTools(m *secrets.Masker) {
	m.Watch(e.MCP.Secrets)
	agent.SetMasker(e.Registry, m)
}

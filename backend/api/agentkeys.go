package api

import (
	"context"

	"github.com/clusterspace/clusterspace/backend/config"
	"github.com/clusterspace/clusterspace/backend/rpc"
	"github.com/clusterspace/clusterspace/backend/workspace"
)

// SetAgentKeysArgs replaces which provider's key each agent template's panes use, by
// template id ("" clears one: the template then uses the person's own login of the tool).
type SetAgentKeysArgs struct {
	Keys config.AgentKeys `json:"keys"`
}

func addAgentKeys(t *rpc.Table, s Services) {
	rpc.Add(t, rpc.Method{Name: "AgentKeys", Route: "GET /api/settings/agent-keys"}, func(ctx context.Context, _ rpc.None) (config.AgentKeys, error) {
		return config.LoadAgentKeys(ctx, s.Settings)
	})
	rpc.Add(t, rpc.Method{Name: "SetAgentKeys", Route: "PUT /api/settings/agent-keys", Body: "keys"}, func(ctx context.Context, a SetAgentKeysArgs) (config.AgentKeys, error) {
		wire := func(id string) (string, bool) {
			tm, ok := workspace.TemplateIn(s.Workspaces.Templates(), id)
			return tm.Wire, ok
		}
		if err := config.SaveAgentKeys(ctx, s.Settings, s.Providers, wire, a.Keys); err != nil {
			return config.AgentKeys{}, err
		}
		return config.LoadAgentKeys(ctx, s.Settings)
	})
}

package config

import (
	"context"
	"fmt"
	"maps"
)

// agentKeysKey holds which provider's key each agent template's panes use.
const agentKeysKey = "agents.template_providers"

// AgentKeys assigns providers to agent templates, by template id: a pane started from the
// template authenticates with that provider's key (kept in the secret vault with the
// provider) at its base URL. A template with none uses the person's own login of the tool.
type AgentKeys struct {
	Providers map[string]string `json:"providers"`
}

// LoadAgentKeys reads the assignments (none: an empty map).
func LoadAgentKeys(ctx context.Context, repo SettingsRepo) (AgentKeys, error) {
	var k AgentKeys
	if _, err := loadSetting(ctx, repo, agentKeysKey, &k, "agent template keys", "assign them again in Settings"); err != nil {
		return AgentKeys{Providers: map[string]string{}}, err
	}
	if k.Providers == nil {
		k.Providers = map[string]string{}
	}
	return k, nil
}

// SaveAgentKeys checks and stores the assignments: each names an agent template (wire is
// the protocol its template speaks, "" for a template that is not an agent) and a provider
// that exists and speaks that protocol.
func SaveAgentKeys(ctx context.Context, repo SettingsRepo, providers *Providers, wire func(template string) (string, bool), k AgentKeys) error {
	list, err := providers.List(ctx)
	if err != nil {
		return err
	}
	clean := map[string]string{}
	for tmpl, id := range k.Providers {
		if id == "" {
			continue // "" clears the assignment
		}
		w, ok := wire(tmpl)
		if !ok || w == "" {
			return &FieldError{"providers." + tmpl, fmt.Sprintf("%q is not an agent template (one that declares config_env and wire); pick claude, codex or one of your templates/ that does", tmpl)}
		}
		found := false
		for _, p := range list.Providers {
			if p.ID != id {
				continue
			}
			found = true
			if p.Kind != w {
				return &FieldError{"providers." + tmpl, fmt.Sprintf("provider %q speaks %s, but the %s template's tool speaks %s: pick a %s provider", p.Name, p.Kind, tmpl, w, w)}
			}
			if !p.APIKeySet {
				return &FieldError{"providers." + tmpl, fmt.Sprintf("provider %q has no API key: add its key in Settings → Providers first", p.Name)}
			}
		}
		if !found {
			return &FieldError{"providers." + tmpl, fmt.Sprintf("no provider has id %q: add it in Settings → Providers, then assign it", id)}
		}
		clean[tmpl] = id
	}
	return saveSetting(ctx, repo, agentKeysKey, AgentKeys{Providers: maps.Clone(clean)})
}

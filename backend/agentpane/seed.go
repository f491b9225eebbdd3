package agentpane

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// confinedAllow are the Claude Code tools a pane inside a goal's sandbox may use without
// asking: the kernel's boundary decides what they can touch, and a goal cannot answer
// Claude Code's permission prompts from outside.
var confinedAllow = []string{"Bash", "Write", "Edit", "MultiEdit", "Read", "Glob", "Grep", "LS"}

// quietEnv keeps an agent from reaching hosts its template does not declare (update checks,
// telemetry), which a confined goal's proxy would refuse anyway.
var quietEnv = map[string]string{
	"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
	"DISABLE_AUTOUPDATER":                      "1",
}

// seedClaude writes CLAUDE_CONFIG_DIR's .claude.json (onboarding done, the working dir
// trusted) and settings.json (the assigned key through apiKeyHelper, the provider's base URL
// and model, the tools a confined pane may use).
func seedClaude(o Options) error {
	if o.Creds.Key == "" {
		if err := copyLogin(o.Home, filepath.Join(".claude", ".credentials.json"), filepath.Join(o.Dir, ".credentials.json")); err != nil {
			return err
		}
	}
	err := mergeJSON(filepath.Join(o.Dir, ".claude.json"), func(m map[string]any) {
		m["hasCompletedOnboarding"] = true
		projects, _ := m["projects"].(map[string]any)
		if projects == nil {
			projects = map[string]any{}
		}
		if o.WorkDir != "" {
			p, _ := projects[o.WorkDir].(map[string]any)
			if p == nil {
				p = map[string]any{}
			}
			p["hasTrustDialogAccepted"] = true
			p["hasCompletedProjectOnboarding"] = true
			projects[o.WorkDir] = p
		}
		m["projects"] = projects
		if o.Creds.Key == "" {
			copyOwnClaudeAccount(o.Home, m)
		}
		claudeMCP(o, m)
	})
	if err != nil {
		return err
	}
	return mergeJSON(filepath.Join(o.Dir, "settings.json"), func(m map[string]any) {
		env, _ := m["env"].(map[string]any)
		if env == nil {
			env = map[string]any{}
		}
		for k, v := range quietEnv {
			env[k] = v
		}
		if o.Creds.Key != "" {
			m["apiKeyHelper"] = "cat " + shellQuote(filepath.Join(o.Dir, keyFile))
			if o.Creds.BaseURL != "" {
				env["ANTHROPIC_BASE_URL"] = strings.TrimSuffix(o.Creds.BaseURL, "/")
			}
			if o.Creds.Model != "" {
				m["model"] = o.Creds.Model
			}
		}
		m["env"] = env
		if o.Confined {
			perms, _ := m["permissions"].(map[string]any)
			if perms == nil {
				perms = map[string]any{}
			}
			perms["allow"] = confinedAllow
			m["permissions"] = perms
		}
	})
}

// copyOwnClaudeAccount carries the person's own account fields from ~/.claude.json (an API
// key they logged in with, their OAuth account) into the pane's.
func copyOwnClaudeAccount(home string, m map[string]any) {
	if home == "" {
		return
	}
	b, err := os.ReadFile(filepath.Join(home, ".claude.json"))
	if err != nil {
		return
	}
	own := map[string]any{}
	if json.Unmarshal(b, &own) != nil {
		return
	}
	for _, k := range []string{"primaryApiKey", "oauthAccount", "customApiKeyResponses"} {
		if v, ok := own[k]; ok {
			m[k] = v
		}
	}
}

// seedCodex writes CODEX_HOME's config.toml (the assigned provider as an OpenAI-compatible
// one, the working dir trusted, and in a confined pane no second sandbox inside ours and no
// approvals a goal cannot give) and auth.json (the assigned key, or the person's own login).
func seedCodex(o Options) error {
	var b strings.Builder
	if o.Creds.Key != "" {
		if o.Creds.Model != "" {
			fmt.Fprintf(&b, "model = %s\n", tomlString(o.Creds.Model))
		}
		b.WriteString("model_provider = \"clusterspace\"\n")
	}
	if o.Confined {
		// The goal's sandbox is the boundary; Codex's own would need namespaces inside it.
		b.WriteString("sandbox_mode = \"danger-full-access\"\napproval_policy = \"never\"\n")
	}
	b.WriteString("check_for_update_on_startup = false\n\n[analytics]\nenabled = false\n\n[notice]\nhide_full_access_warning = true\n")
	if o.Creds.Key != "" {
		fmt.Fprintf(&b, "\n[model_providers.clusterspace]\nname = %s\nbase_url = %s\nwire_api = \"responses\"\nrequires_openai_auth = true\n",
			tomlString("ClusterSpace: "+o.Creds.Provider), tomlString(strings.TrimSuffix(o.Creds.BaseURL, "/")))
	}
	if o.WorkDir != "" {
		fmt.Fprintf(&b, "\n[projects.%s]\ntrust_level = \"trusted\"\n", tomlString(o.WorkDir))
	}
	codexMCP(o, &b)
	if err := writePrivate(filepath.Join(o.Dir, "config.toml"), []byte(b.String())); err != nil {
		return err
	}
	if o.Creds.Key != "" {
		auth, _ := json.Marshal(map[string]any{"OPENAI_API_KEY": o.Creds.Key})
		return writePrivate(filepath.Join(o.Dir, "auth.json"), auth)
	}
	return copyLogin(o.Home, filepath.Join(".codex", "auth.json"), filepath.Join(o.Dir, "auth.json"))
}

// tomlString quotes s as a TOML basic string (JSON's escapes are TOML's).
func tomlString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

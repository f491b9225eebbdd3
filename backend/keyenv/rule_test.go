package keyenv_test

import (
	"slices"
	"testing"

	"github.com/clusterspace/clusterspace/backend/keyenv"
)

// The rule takes keys by the shape of their names, including the ones a list of three names
// let through (ANTHROPIC_AUTH_TOKEN), and leaves what only says where a provider is.
func TestIsKeyByRule(t *testing.T) {
	keys := []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENROUTER_API_KEY", "ANTHROPIC_AUTH_TOKEN",
		"CLAUDE_CODE_OAUTH_TOKEN", "GEMINI_API_KEY", "GOOGLE_API_KEY", "MY_APIKEY", "my_api_key", "AWS_SECRET_ACCESS_KEY",
		"AWS_SESSION_TOKEN", "AZURE_OPENAI_API_KEY", "HF_TOKEN", "GITHUB_TOKEN", "GH_TOKEN", "GROQ_KEY",
		"SOME_SERVICE_SECRET", "DB_PASSWORD", "STRIPE_SECRET_KEY", "DEPLOY_PRIVATE_KEY", "MISTRAL_API_KEY_2"}
	for _, k := range keys {
		if !keyenv.IsKey(k) {
			t.Errorf("IsKey(%q) = false, want true", k)
		}
	}
	plain := []string{"PATH", "HOME", "ANTHROPIC_BASE_URL", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "TOKEN_LIMIT",
		"SSH_AUTH_SOCK", "KEYMAP", "MAX_TOKENS", "GOPATH", "TERM", "MONKEY", "PASSWORD_STORE_DIR", "CLAUDE_CONFIG_DIR", "CODEX_HOME"}
	for _, p := range plain {
		if keyenv.IsKey(p) {
			t.Errorf("IsKey(%q) = true, want false", p)
		}
	}
}

func TestStripRemovesKeysAndTheExtraNames(t *testing.T) {
	env := []string{"PATH=/bin", "ANTHROPIC_AUTH_TOKEN=t", "OPENAI_API_KEY=k", "MINE=v", "LANG=C"}
	got := keyenv.Strip(env, func(n string) bool { return n == "MINE" })
	if want := []string{"PATH=/bin", "LANG=C"}; !slices.Equal(got, want) {
		t.Fatalf("Strip = %v, want %v", got, want)
	}
	if len(env) != 5 {
		t.Fatalf("Strip changed its argument: %v", env)
	}
}

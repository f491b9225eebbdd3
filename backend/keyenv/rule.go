package keyenv

import (
	"os"
	"slices"
	"strings"
)

// The rule that names a key variable. A pane never inherits one from the app, and Seal moves
// every one the app was started with out of its environment. A list of names cannot keep up
// with providers (ANTHROPIC_AUTH_TOKEN slipped past a list of three), so the rule goes by
// the shape of the name, case-insensitively:
//
//   - it contains API_KEY or APIKEY (OPENAI_API_KEY, MY_APIKEY, GOOGLE_API_KEY_2);
//   - it ends in _AUTH_TOKEN, _ACCESS_TOKEN, _OAUTH_TOKEN, _SESSION_TOKEN, _SECRET,
//     _SECRET_KEY, _SECRET_ACCESS_KEY, _PRIVATE_KEY, _PASSWORD or _PASSWD;
//   - it is TOKEN or KEY of a model or code-hosting provider: its first word is one of
//     providerPrefixes and it ends in _TOKEN or _KEY (HF_TOKEN, GITHUB_TOKEN, GROQ_KEY).
//
// Variables that only say where a provider is (ANTHROPIC_BASE_URL, OPENAI_ORG_ID) are not
// keys. The person's own terminals get the same rule: a key a pane needs is given to that
// pane alone (an agent template's key, a launch's own env), never inherited from the app.
var (
	keyInfixes   = []string{"API_KEY", "APIKEY"}
	keySuffixes  = []string{"_AUTH_TOKEN", "_ACCESS_TOKEN", "_OAUTH_TOKEN", "_SESSION_TOKEN", "_SECRET", "_SECRET_KEY", "_SECRET_ACCESS_KEY", "_PRIVATE_KEY", "_PASSWORD", "_PASSWD"}
	providerKeys = []string{"_TOKEN", "_KEY"}
	// providerPrefixes are the first words of the variables model and code-hosting services
	// read their credentials from.
	providerPrefixes = []string{"OPENAI", "ANTHROPIC", "CLAUDE", "OPENROUTER", "GEMINI", "GOOGLE", "VERTEX", "AZURE",
		"AWS", "BEDROCK", "MISTRAL", "GROQ", "DEEPSEEK", "XAI", "GROK", "TOGETHER", "FIREWORKS", "PERPLEXITY",
		"COHERE", "HF", "HUGGINGFACE", "HUGGING", "REPLICATE", "CEREBRAS", "OLLAMA", "LITELLM", "CODEX",
		"GITHUB", "GH", "GITLAB", "COPILOT", "CURSOR", "AIDER", "VOYAGE", "MOONSHOT", "DASHSCOPE", "ZHIPU"}
)

// IsKey reports whether the variable name is a key variable by the rule above.
func IsKey(name string) bool {
	n := strings.ToUpper(name)
	for _, infix := range keyInfixes {
		if strings.Contains(n, infix) {
			return true
		}
	}
	for _, suffix := range keySuffixes {
		if strings.HasSuffix(n, suffix) {
			return true
		}
	}
	first, _, _ := strings.Cut(n, "_")
	if slices.Contains(providerPrefixes, first) {
		for _, suffix := range providerKeys {
			if strings.HasSuffix(n, suffix) {
				return true
			}
		}
	}
	return false
}

// Strip returns env (NAME=value entries) without the key variables and without extra names.
func Strip(env []string, extra func(name string) bool) []string {
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return IsKey(name) || (extra != nil && extra(name))
	})
}

// inEnvironment lists the names of this process's key variables.
func inEnvironment() []string {
	var names []string
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); IsKey(name) {
			names = append(names, name)
		}
	}
	return names
}

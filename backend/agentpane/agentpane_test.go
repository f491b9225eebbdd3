package agentpane

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/workspace"
)

func template(t *testing.T, id string) workspace.Template {
	t.Helper()
	tm, ok := workspace.TemplateByID(id)
	if !ok {
		t.Fatalf("no built-in template %s", id)
	}
	return tm
}

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]any{}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Mode().Perm()
}

// A claude pane with a key assigned in Settings: CLAUDE_CONFIG_DIR points at its private dir,
// onboarding is done and the work dir trusted, the key sits in a 0600 file its apiKeyHelper
// prints, the provider's base URL and model are set, and only the provider's host is reached.
func TestClaudePaneWithAnAssignedKey(t *testing.T) {
	dir, work := filepath.Join(t.TempDir(), "cfg"), t.TempDir()
	s, err := Prepare(template(t, "claude"), Options{Dir: dir, WorkDir: work, Home: t.TempDir(), Confined: true,
		Creds: Credentials{BaseURL: "http://127.0.0.1:4321/", Key: "sk-ant-assigned", Model: "claude-x", Provider: "Mine"}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.Env, []string{"CLAUDE_CONFIG_DIR=" + dir}) || !slices.Equal(s.Hosts, []string{"127.0.0.1:4321"}) {
		t.Fatalf("setup: env %v hosts %v", s.Env, s.Hosts)
	}
	if !strings.Contains(s.Notice, `provider "Mine"`) {
		t.Errorf("notice %q does not name the provider", s.Notice)
	}
	cj := readJSON(t, filepath.Join(dir, ".claude.json"))
	proj, _ := cj["projects"].(map[string]any)[work].(map[string]any)
	if cj["hasCompletedOnboarding"] != true || proj["hasTrustDialogAccepted"] != true {
		t.Errorf(".claude.json: %v", cj)
	}
	st := readJSON(t, filepath.Join(dir, "settings.json"))
	env, _ := st["env"].(map[string]any)
	if env["ANTHROPIC_BASE_URL"] != "http://127.0.0.1:4321" || st["model"] != "claude-x" {
		t.Errorf("settings.json: %v", st)
	}
	helper, _ := st["apiKeyHelper"].(string)
	key := filepath.Join(dir, keyFile)
	if helper != "cat '"+key+"'" {
		t.Errorf("apiKeyHelper %q, want cat of %s", helper, key)
	}
	if b, _ := os.ReadFile(key); string(b) != "sk-ant-assigned" || mode(t, key) != 0o600 {
		t.Errorf("key file: %q mode %v", b, mode(t, key))
	}
	allow, _ := st["permissions"].(map[string]any)["allow"].([]any)
	if !slices.Contains(allow, any("Bash")) || !slices.Contains(allow, any("Write")) {
		t.Errorf("a confined pane's permissions: %v", st["permissions"])
	}
	if strings.Contains(strings.Join(s.Env, " "), "sk-ant") {
		t.Errorf("the key went into the environment: %v", s.Env)
	}
	// A second run (a resumed goal) keeps what the tool stored itself.
	cj["numStartups"] = 3.0
	b, _ := json.Marshal(cj)
	os.WriteFile(filepath.Join(dir, ".claude.json"), b, 0o600)
	if _, err := Prepare(template(t, "claude"), Options{Dir: dir, WorkDir: work, Home: t.TempDir(), Creds: Credentials{Key: "k2", BaseURL: "http://h:1"}}); err != nil {
		t.Fatal(err)
	}
	if readJSON(t, filepath.Join(dir, ".claude.json"))["numStartups"] != 3.0 {
		t.Error("seeding again dropped what the tool stored")
	}
}

// Without a key in Settings, the person's own login of the tool is copied (0600) into the
// private dir; the person's files are left as they were.
func TestOwnLoginIsCopied(t *testing.T) {
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".claude"), 0o700)
	os.WriteFile(filepath.Join(home, ".claude", ".credentials.json"), []byte(`{"claudeAiOauth":{"accessToken":"own"}}`), 0o644)
	os.WriteFile(filepath.Join(home, ".claude.json"), []byte(`{"primaryApiKey":"sk-own","theme":"dark"}`), 0o600)
	os.MkdirAll(filepath.Join(home, ".codex"), 0o700)
	os.WriteFile(filepath.Join(home, ".codex", "auth.json"), []byte(`{"OPENAI_API_KEY":"sk-own-openai"}`), 0o600)

	dir := filepath.Join(t.TempDir(), "claude")
	s, err := Prepare(template(t, "claude"), Options{Dir: dir, Home: home})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, ".credentials.json")); !strings.Contains(string(b), "own") || mode(t, filepath.Join(dir, ".credentials.json")) != 0o600 {
		t.Errorf("own credentials not copied privately: %q", b)
	}
	if cj := readJSON(t, filepath.Join(dir, ".claude.json")); cj["primaryApiKey"] != "sk-own" {
		t.Errorf("own API key login not carried: %v", cj)
	}
	if st := readJSON(t, filepath.Join(dir, "settings.json")); st["apiKeyHelper"] != nil || st["permissions"] != nil {
		t.Errorf("an unconfined pane with its own login: %v", st)
	}
	if !slices.Equal(s.Hosts, []string{"api.anthropic.com:443"}) || !strings.Contains(s.Notice, "own login") {
		t.Errorf("hosts %v notice %q", s.Hosts, s.Notice)
	}

	cdir := filepath.Join(t.TempDir(), "codex")
	if _, err := Prepare(template(t, "codex"), Options{Dir: cdir, Home: home, WorkDir: "/w"}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(cdir, "auth.json")); !strings.Contains(string(b), "sk-own-openai") {
		t.Errorf("codex own login not copied: %q", b)
	}
}

// A codex pane with a key assigned: an OpenAI-compatible provider in config.toml, the key in
// auth.json, the work dir trusted, and no second sandbox inside a goal's.
func TestCodexPaneWithAnAssignedKey(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "codex")
	s, err := Prepare(template(t, "codex"), Options{Dir: dir, WorkDir: "/work/x", Confined: true,
		Creds: Credentials{BaseURL: "http://127.0.0.1:9/v1", Key: "sk-oai", Model: "m1", Provider: "Local"}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.Env, []string{"CODEX_HOME=" + dir}) || !slices.Equal(s.Hosts, []string{"127.0.0.1:9"}) {
		t.Fatalf("setup %+v", s)
	}
	cfg, _ := os.ReadFile(filepath.Join(dir, "config.toml"))
	for _, want := range []string{`model = "m1"`, `model_provider = "clusterspace"`, `base_url = "http://127.0.0.1:9/v1"`,
		`wire_api = "responses"`, `[projects."/work/x"]`, `trust_level = "trusted"`, `sandbox_mode = "danger-full-access"`} {
		if !strings.Contains(string(cfg), want) {
			t.Errorf("config.toml lacks %s:\n%s", want, cfg)
		}
	}
	if a := readJSON(t, filepath.Join(dir, "auth.json")); a["OPENAI_API_KEY"] != "sk-oai" || mode(t, filepath.Join(dir, "auth.json")) != 0o600 {
		t.Errorf("auth.json %v", a)
	}
}

func TestPrepareRefusesWhatIsNotAnAgent(t *testing.T) {
	if _, err := Prepare(template(t, "python"), Options{Dir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "config_env") {
		t.Errorf("python: %v", err)
	}
	if _, err := Prepare(template(t, "claude"), Options{Dir: "rel"}); err == nil || !strings.Contains(err.Error(), "absolute") {
		t.Errorf("relative dir: %v", err)
	}
}

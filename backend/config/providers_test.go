package config_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/clusterspace/clusterspace/backend/config"
	"github.com/clusterspace/clusterspace/backend/pubsub"
	"github.com/clusterspace/clusterspace/backend/secrets/secretstest"
	"github.com/clusterspace/clusterspace/backend/store"
)

const key = "sk-test-abcdefghijklmnop9876"

func newProviders(t *testing.T) (*config.Providers, *store.Store) {
	t.Helper()
	st, vault := secretstest.Open(t)
	return config.NewProviders(st, vault, newBroker[config.ProviderList](t), nil), st
}

// newBroker is a broker shut down when the test ends.
func newBroker[T any](t *testing.T) *pubsub.Broker[T] {
	b := pubsub.NewBroker[T]()
	t.Cleanup(b.Shutdown)
	return b
}

func ptr[T any](v T) *T { return &v }

func TestProvidersKeepKeysOutOfEverythingTheUISees(t *testing.T) {
	svc, _ := newProviders(t)
	ctx := context.Background()
	events := svc.Events().Subscribe(t.Context())
	p, err := svc.Save(ctx, "", config.ProviderInput{ProviderSettings: config.ProviderSettings{Name: "OpenAI", Kind: "openai", Model: "gpt-test"}, APIKey: ptr(key)})
	if err != nil {
		t.Fatal(err)
	}
	if p.BaseURL != "https://api.openai.com/v1" || !p.APIKeySet || p.APIKeyHint != "sk-…9876" {
		t.Fatalf("saved %+v", p)
	}
	list, _ := svc.List(ctx)
	ev := <-events
	for what, v := range map[string]any{"saved": p, "list": list, "event": ev.Payload} {
		b, _ := json.Marshal(v)
		if strings.Contains(string(b), "abcdefghijklmnop") {
			t.Errorf("the API key appears in the %s: %s", what, b)
		}
	}
	// The first provider is the default for agents and critics.
	if list.DefaultID != p.ID || list.CriticDefaultID != p.ID || list.SecretsBackend != "file" {
		t.Fatalf("defaults %+v", list)
	}
	// Runners get the key through Resolve only.
	for _, ref := range []string{"", "critic", p.ID, "openai"} {
		r, err := svc.Resolve(ctx, ref)
		if err != nil || r.APIKey != key {
			t.Fatalf("resolve %q: %v", ref, err)
		}
	}
	if b, _ := json.Marshal(config.Resolved{APIKey: key}); strings.Contains(string(b), key) {
		t.Fatal("a Resolved provider serialises its key")
	}
}

func TestProviderEditsKeysAndDeletes(t *testing.T) {
	svc, st := newProviders(t)
	ctx := context.Background()
	a, _ := svc.Save(ctx, "", config.ProviderInput{ProviderSettings: config.ProviderSettings{Name: "A", Kind: "anthropic", Model: "claude-test"}, APIKey: ptr(key)})
	b, _ := svc.Save(ctx, "", config.ProviderInput{ProviderSettings: config.ProviderSettings{Name: "Local", Kind: "openai", BaseURL: "http://127.0.0.1:11434/v1/", Model: "llama"}})
	if b.BaseURL != "http://127.0.0.1:11434/v1" || b.APIKeySet {
		t.Fatalf("local provider %+v", b)
	}
	// An edit without apiKey keeps it; an empty one removes it.
	a2, err := svc.Save(ctx, a.ID, config.ProviderInput{ProviderSettings: config.ProviderSettings{Name: "A", Kind: "anthropic", Model: "claude-2", Temperature: ptr(0.2)}})
	if err != nil || !a2.APIKeySet || a2.Model != "claude-2" || *a2.Temperature != 0.2 {
		t.Fatalf("edit kept? %+v %v", a2, err)
	}
	a3, _ := svc.Save(ctx, a.ID, config.ProviderInput{ProviderSettings: config.ProviderSettings{Name: "A", Kind: "anthropic", Model: "claude-2"}, APIKey: ptr("")})
	if a3.APIKeySet {
		t.Fatal("an empty apiKey did not remove the key")
	}
	if _, err := svc.SetDefaults(ctx, b.ID, "prov-nope"); err == nil || !strings.Contains(err.Error(), "criticDefaultId") {
		t.Fatalf("unknown critic: %v", err)
	}
	list, err := svc.SetDefaults(ctx, b.ID, a.ID)
	if err != nil || list.DefaultID != b.ID || list.CriticDefaultID != a.ID {
		t.Fatalf("defaults %+v %v", list, err)
	}
	svc.Save(ctx, a.ID, config.ProviderInput{ProviderSettings: config.ProviderSettings{Name: "A", Kind: "anthropic", Model: "claude-2"}, APIKey: ptr(key)})
	if err := svc.Delete(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	list, _ = svc.List(ctx)
	if len(list.Providers) != 1 || list.CriticDefaultID != "" || list.DefaultID != b.ID {
		t.Fatalf("after delete %+v", list)
	}
	if _, ok, _ := st.SecretRow(ctx, "provider/"+a.ID+"/api_key"); ok {
		t.Fatal("the deleted provider's key is still stored")
	}
	if err := svc.Delete(ctx, a.ID); !errors.Is(err, config.ErrNotFound) {
		t.Fatalf("delete twice: %v", err)
	}
	if _, err := svc.Resolve(ctx, "critic"); err != nil {
		t.Fatalf("critic falls back to the default: %v", err)
	}
}

func TestProviderValidationNamesTheField(t *testing.T) {
	svc, _ := newProviders(t)
	ctx := context.Background()
	svc.Save(ctx, "", config.ProviderInput{ProviderSettings: config.ProviderSettings{Name: "Taken", Kind: "openai", Model: "m"}})
	for field, in := range map[string]config.ProviderSettings{
		"name":          {Kind: "openai", Model: "m"},
		"kind":          {Name: "x", Kind: "gemini", Model: "m"},
		"model":         {Name: "x", Kind: "openai"},
		"baseUrl":       {Name: "x", Kind: "openai", Model: "m", BaseURL: "ftp://host"},
		"temperature":   {Name: "x", Kind: "openai", Model: "m", Temperature: ptr(3.5)},
		"temperature ":  {Name: "x", Kind: "anthropic", Model: "m", Temperature: ptr(1.5)},
		"maxTokens":     {Name: "x", Kind: "openai", Model: "m", MaxTokens: -1},
		"contextWindow": {Name: "x", Kind: "openai", Model: "m", ContextWindow: -5},
	} {
		_, err := svc.Save(ctx, "", config.ProviderInput{ProviderSettings: in})
		var fe *config.FieldError
		if !errors.As(err, &fe) || fe.Field != strings.TrimSpace(field) {
			t.Errorf("%s: got %v", field, err)
		}
	}
	if _, err := svc.Save(ctx, "", config.ProviderInput{ProviderSettings: config.ProviderSettings{Name: "taken", Kind: "openai", Model: "m"}}); err == nil || !strings.Contains(err.Error(), "already used") {
		t.Errorf("duplicate name: %v", err)
	}
}

func TestPrices(t *testing.T) {
	svc, _ := newProviders(t)
	ctx := context.Background()
	// Until the user saves a table, the known models' prices stand, cache prices included.
	known, err := svc.Prices(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s := known["claude-sonnet-4"]; s.InputPerMTok != 3 || s.CachedInputPerMTok != 0.3 || s.CacheWritePerMTok != 3.75 {
		t.Fatalf("default price of claude-sonnet-4: %+v", s)
	}
	if err := svc.SetPrices(ctx, map[string]config.Price{"m": {InputPerMTok: 1, CachedInputPerMTok: -0.1}}); err == nil || !strings.Contains(err.Error(), "m: prices must be zero or more") {
		t.Fatalf("a negative cached price: %v", err)
	}
	if err := svc.SetPrices(ctx, map[string]config.Price{"gpt-test": {InputPerMTok: 2.5, OutputPerMTok: 10}}); err != nil {
		t.Fatal(err)
	}
	p, _ := svc.Prices(ctx)
	if p["gpt-test"].OutputPerMTok != 10 {
		t.Fatalf("prices %v", p)
	}
	if err := svc.SetPrices(ctx, map[string]config.Price{"m": {InputPerMTok: -1}}); err == nil {
		t.Fatal("a negative price was accepted")
	}
}

// A stored JSON setting that no longer parses is refused with its name and the way out, and
// the defaults stand meanwhile.
func TestDamagedSettingsSayWhichAndWhatToDo(t *testing.T) {
	svc, st := newProviders(t)
	ctx := context.Background()
	for _, c := range []struct {
		key, want string
		load      func() (empty bool, err error)
	}{
		{"goals.defaults", "goal settings cannot be read, it is damaged", func() (bool, error) {
			d, err := config.LoadGoalDefaults(ctx, st)
			return d.MaxConcurrent == 0, err
		}},
		{"agents.template_providers", "agent template keys cannot be read, it is damaged", func() (bool, error) {
			k, err := config.LoadAgentKeys(ctx, st)
			return k.Providers == nil, err
		}},
		{"llm.prices", "price table cannot be read, it is damaged", func() (bool, error) {
			p, err := svc.Prices(ctx)
			return p == nil, err
		}},
	} {
		if err := st.SetSetting(ctx, c.key, `{"not json`); err != nil {
			t.Fatal(err)
		}
		empty, err := c.load()
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "again") {
			t.Errorf("%s: %v, want %q and what to set again", c.key, err, c.want)
		}
		if empty {
			t.Errorf("%s: a damaged setting left no defaults (nil where callers read)", c.key)
		}
	}
}

func TestDiscoverFindsOpenAICompatibleServers(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/models" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(`{"object":"list","data":[{"id":"llama3.2"},{"id":"qwen2.5"}]}`))
	}))
	defer srv.Close()
	_, portStr, _ := net.SplitHostPort(srv.Listener.Addr().String())
	port, _ := strconv.Atoi(portStr)
	// A closed port next to it: found nothing there, and fast.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	found, err := config.Discover(context.Background(), "127.0.0.1", []config.LocalPort{{port, "Ollama"}, {closed, "vLLM"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 1 || found[0].Name != "Ollama" || len(found[0].Models) != 2 || !strings.HasSuffix(found[0].BaseURL, "/v1") {
		t.Fatalf("found %+v", found)
	}
	if _, err := config.Discover(context.Background(), "http://x/y", nil); err == nil {
		t.Fatal("a URL was accepted as a host")
	}
}

func TestGoalDefaults(t *testing.T) {
	_, st := newProviders(t)
	ctx := context.Background()
	d, err := config.LoadGoalDefaults(ctx, st)
	if err != nil || d.MaxConcurrent != 3 || d.BudgetUSD != 0 {
		t.Fatalf("defaults %+v %v", d, err)
	}
	if err := config.SaveGoalDefaults(ctx, st, config.GoalDefaults{MaxConcurrent: 0}); err == nil || !strings.Contains(err.Error(), "maxConcurrent") {
		t.Fatalf("0 slots: %v", err)
	}
	if err := config.SaveGoalDefaults(ctx, st, config.GoalDefaults{MaxConcurrent: 5, BudgetUSD: 2.5, BudgetTokens: 100000}); err != nil {
		t.Fatal(err)
	}
	if d, _ := config.LoadGoalDefaults(ctx, st); d.MaxConcurrent != 5 || d.BudgetUSD != 2.5 || d.BudgetTokens != 100000 {
		t.Fatalf("saved %+v", d)
	}
}

// "Test connection" on an empty add form names the key field and what to type, not the
// placeholder name the service gives an unsaved provider.
func TestTestUnsavedAsksForTheKeyByField(t *testing.T) {
	svc, _ := newProviders(t)
	ctx := context.Background()
	for kind, vendor := range map[string]string{"openai": "OpenAI", "anthropic": "Anthropic"} {
		_, err := svc.TestUnsaved(ctx, "", config.ProviderInput{ProviderSettings: config.ProviderSettings{Kind: kind}})
		var fe *config.FieldError
		if !errors.As(err, &fe) || fe.Field != "apiKey" || fe.Msg != "enter the "+vendor+" key to test this provider" {
			t.Errorf("%s: got %v, want the apiKey field asking for the %s key", kind, err, vendor)
		}
		if err != nil && strings.Contains(err.Error(), "unsaved") {
			t.Errorf("%s: the message names the internal placeholder: %v", kind, err)
		}
	}
	// A local server needs no key: the test goes ahead.
	if _, err := svc.TestUnsaved(ctx, "", config.ProviderInput{ProviderSettings: config.ProviderSettings{Kind: "openai", BaseURL: "http://127.0.0.1:11434/v1"}}); err != nil {
		t.Errorf("local server: %v", err)
	}
}

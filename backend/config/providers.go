package config

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/clusterspace/clusterspace/backend/internal/randid"
	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/pubsub"
)

// Provider kinds: the two wire protocols.
const (
	KindOpenAI    = "openai"    // OpenAI Chat Completions and every server that speaks it
	KindAnthropic = "anthropic" // Anthropic Messages
)

// Base URLs used when a provider leaves its own empty.
var defaultBaseURL = map[string]string{
	KindOpenAI:    "https://api.openai.com/v1",
	KindAnthropic: "https://api.anthropic.com",
}

// maxTemperatureFor is the highest temperature each protocol accepts: Anthropic refuses more
// than 1, OpenAI-style servers take up to 2.
func maxTemperatureFor(kind string) float64 {
	if kind == KindAnthropic {
		return 1
	}
	return 2
}

// Limits that catch typos (a max-tokens of 4e9) without getting in the way of real models.
const (
	maxTokensLimit   = 1_000_000
	maxContextWindow = 10_000_000
)

// Settings keys.
const (
	defaultProviderKey = "llm.default_provider"
	criticProviderKey  = "llm.critic_provider"
	pricesKey          = "llm.prices"
)

// ProviderSettings are what the person sets of a provider: a saved one carries them, and so
// does an add or an edit.
type ProviderSettings struct {
	Name          string   `json:"name"`
	Kind          string   `json:"kind"`
	BaseURL       string   `json:"baseUrl"`
	Model         string   `json:"model"`
	VisionModel   string   `json:"visionModel"`
	Temperature   *float64 `json:"temperature"`
	MaxTokens     int      `json:"maxTokens"`
	Thinking      bool     `json:"thinking"`
	ContextWindow int      `json:"contextWindow"`
}

// Provider is a configured model endpoint as the UI sees it: the API key itself never
// leaves the backend, only whether one is set and a masked hint.
type Provider struct {
	ID               string `json:"id"`
	ProviderSettings `tstype:",extends"`
	APIKeySet        bool      `json:"apiKeySet"`
	APIKeyHint       string    `json:"apiKeyHint"`
	CreatedAt        time.Time `json:"createdAt"`
	UpdatedAt        time.Time `json:"updatedAt"`
}

// ProviderInput is an add or an edit. APIKey nil keeps the stored key, "" removes it.
type ProviderInput struct {
	ProviderSettings `tstype:",extends"`
	APIKey           *string `json:"apiKey,omitempty"`
}

// ProviderList is every provider plus the defaults for agents and for critics.
type ProviderList struct {
	Providers       []Provider `json:"providers"`
	DefaultID       string     `json:"defaultId"`
	CriticDefaultID string     `json:"criticDefaultId"`
	// SecretsBackend says where API keys are kept: "keyring" or "file".
	SecretsBackend string `json:"secretsBackend"`
}

// Price is USD per million tokens. The cache prices are for input read from and written to
// the provider's prompt cache; 0 leaves such input at the full input price. It has
// llm.Price's fields, so each converts to the other; only the tags differ (the UI is sent
// every price, zeros too).
type Price struct {
	InputPerMTok       float64 `json:"inputPerMTok"`
	OutputPerMTok      float64 `json:"outputPerMTok"`
	CachedInputPerMTok float64 `json:"cachedInputPerMTok"`
	CacheWritePerMTok  float64 `json:"cacheWritePerMTok"`
}

// LLM is the price as the model layer reads it.
func (p Price) LLM() llm.Price {
	return llm.Price(p)
}

// Resolved is a provider with its API key: what a runner needs to call it. It stays in the
// backend; never serialise it to a client.
type Resolved struct {
	Provider
	APIKey string `json:"-"`
}

// FieldError is bad input, named by the field.
type FieldError struct{ Field, Msg string }

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// ErrNotFound means no provider has that id.
var ErrNotFound = errors.New("not found")

// ErrNoProvider means no model provider is set up yet: nothing can ask a model until the
// person adds one. A door answers it as the person's to fix (HTTP 409), not as a failure.
var ErrNoProvider = errors.New("no model provider is set up: add one in Settings → Providers")

// ProviderRepo is the persistence the service needs; the store implements it.
type ProviderRepo interface {
	ListProviders(ctx context.Context) ([]Provider, error)
	SaveProvider(ctx context.Context, p Provider) error
	DeleteProvider(ctx context.Context, id string) error
	Setting(ctx context.Context, key string) (string, bool, error)
	SetSetting(ctx context.Context, key, value string) error
}

// Vault keeps API keys; secrets.Vault implements it.
type Vault interface {
	Set(ctx context.Context, name, value string) error
	Get(ctx context.Context, name string) (string, bool, error)
	Delete(ctx context.Context, name string) error
	Backend() string
}

// TestResult is what "Test connection" reports.
type TestResult struct {
	OK        bool     `json:"ok"`
	Message   string   `json:"message"`
	Models    []string `json:"models,omitempty"`
	LatencyMS int64    `json:"latencyMs"`
}

// Tester checks that a provider answers; the llm layer implements it.
type Tester interface {
	Test(ctx context.Context, p Resolved) TestResult
}

// Providers manages provider settings, their keys, the defaults and the price table.
type Providers struct {
	repo   ProviderRepo
	vault  Vault
	events *pubsub.Broker[ProviderList]
	tester Tester
	mu     sync.Mutex
	now    func() time.Time
}

// NewProviders returns the service. tester may be nil until a model layer is wired.
func NewProviders(repo ProviderRepo, vault Vault, events *pubsub.Broker[ProviderList], tester Tester) *Providers {
	return &Providers{repo: repo, vault: vault, events: events, tester: tester,
		now: func() time.Time { return time.Now().UTC().Truncate(time.Millisecond) }}
}

// Events is the broker the service publishes ProviderList snapshots to.
func (s *Providers) Events() *pubsub.Broker[ProviderList] { return s.events }

func secretName(id string) string { return "provider/" + id + "/api_key" }

// List returns every provider (keys masked) and the defaults.
func (s *Providers) List(ctx context.Context) (ProviderList, error) {
	ps, err := s.repo.ListProviders(ctx)
	if err != nil {
		return ProviderList{}, err
	}
	for i := range ps {
		key, ok, err := s.vault.Get(ctx, secretName(ps[i].ID))
		if err != nil {
			// The key exists but cannot be read now (a locked keyring): say so instead of failing the list.
			ps[i].APIKeySet, ps[i].APIKeyHint = true, "(unreadable: enter it again)"
			continue
		}
		ps[i].APIKeySet, ps[i].APIKeyHint = ok, maskKey(key)
	}
	if ps == nil {
		ps = []Provider{}
	}
	def, _, err := s.repo.Setting(ctx, defaultProviderKey)
	if err != nil {
		return ProviderList{}, err
	}
	critic, _, err := s.repo.Setting(ctx, criticProviderKey)
	if err != nil {
		return ProviderList{}, err
	}
	return ProviderList{Providers: ps, DefaultID: def, CriticDefaultID: critic, SecretsBackend: s.vault.Backend()}, nil
}

func (s *Providers) publish(ctx context.Context) {
	if list, err := s.List(ctx); err == nil {
		s.events.Publish("updated", list)
	}
}

func validate(in ProviderInput, others []Provider, selfID string) (ProviderInput, error) {
	in.Name = strings.TrimSpace(in.Name)
	in.BaseURL = strings.TrimRight(strings.TrimSpace(in.BaseURL), "/")
	in.Model = strings.TrimSpace(in.Model)
	in.VisionModel = strings.TrimSpace(in.VisionModel)
	if in.APIKey != nil {
		key := strings.TrimSpace(*in.APIKey)
		in.APIKey = &key
	}
	if err := checkName(in.Name, others, selfID, func(p Provider) (string, string) { return p.ID, p.Name }, "provider"); err != nil {
		return in, err
	}
	switch {
	case in.Kind != KindOpenAI && in.Kind != KindAnthropic:
		return in, &FieldError{"kind", fmt.Sprintf("is %q; must be %q (OpenAI and compatible servers) or %q", in.Kind, KindOpenAI, KindAnthropic)}
	case in.Model == "":
		return in, &FieldError{"model", "must not be empty: name the model to use, e.g. the one \"Test connection\" lists"}
	case in.Temperature != nil && (math.IsNaN(*in.Temperature) || *in.Temperature < 0 || *in.Temperature > maxTemperatureFor(in.Kind)):
		return in, &FieldError{"temperature", fmt.Sprintf("must be between 0 and %v for this protocol, or empty for the server's default", maxTemperatureFor(in.Kind))}
	case in.MaxTokens < 0 || in.MaxTokens > maxTokensLimit:
		return in, &FieldError{"maxTokens", fmt.Sprintf("must be between 0 (the default) and %d", maxTokensLimit)}
	case in.ContextWindow < 0 || in.ContextWindow > maxContextWindow:
		return in, &FieldError{"contextWindow", fmt.Sprintf("must be between 0 (unknown) and %d tokens", maxContextWindow)}
	}
	if in.BaseURL == "" {
		in.BaseURL = defaultBaseURL[in.Kind]
	}
	u, err := url.Parse(in.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return in, &FieldError{"baseUrl", fmt.Sprintf("%q is not an http(s) URL such as http://127.0.0.1:11434/v1", in.BaseURL)}
	}
	return in, nil
}

// Save adds a provider (id "") or replaces one, storing its key in the vault.
func (s *Providers) Save(ctx context.Context, id string, in ProviderInput) (Provider, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	all, err := s.repo.ListProviders(ctx)
	if err != nil {
		return Provider{}, err
	}
	var p Provider
	if id != "" {
		i := slices.IndexFunc(all, func(p Provider) bool { return p.ID == id })
		if i < 0 {
			return Provider{}, fmt.Errorf("provider %q: %w", id, ErrNotFound)
		}
		p = all[i]
	} else {
		p = Provider{ID: randid.New("prov-"), CreatedAt: s.now()}
	}
	in, err = validate(in, all, p.ID)
	if err != nil {
		return Provider{}, err
	}
	p.ProviderSettings = in.ProviderSettings
	p.UpdatedAt = s.now()
	// The key first: a provider row never points at a key that failed to save.
	if err := putSecret(ctx, s.vault, secretName(p.ID), in.APIKey, "API key"); err != nil {
		return Provider{}, err
	}
	if err := s.repo.SaveProvider(ctx, p); err != nil {
		return Provider{}, err
	}
	// The first provider becomes the default for agents and critics: one less step to start.
	if len(all) == 0 && id == "" {
		s.repo.SetSetting(ctx, defaultProviderKey, p.ID)
		s.repo.SetSetting(ctx, criticProviderKey, p.ID)
	}
	key, ok, _ := s.vault.Get(ctx, secretName(p.ID))
	p.APIKeySet, p.APIKeyHint = ok, maskKey(key)
	s.publish(ctx)
	return p, nil
}

// Delete removes a provider and its key; defaults that pointed at it are cleared.
func (s *Providers) Delete(ctx context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.repo.DeleteProvider(ctx, id); err != nil {
		return err
	}
	if err := s.vault.Delete(ctx, secretName(id)); err != nil {
		return err
	}
	for _, k := range []string{defaultProviderKey, criticProviderKey} {
		if v, _, _ := s.repo.Setting(ctx, k); v == id {
			s.repo.SetSetting(ctx, k, "")
		}
	}
	s.publish(ctx)
	return nil
}

// SetDefaults chooses the default provider for agents and the one for critics ("" = none).
func (s *Providers) SetDefaults(ctx context.Context, defaultID, criticID string) (ProviderList, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	all, err := s.repo.ListProviders(ctx)
	if err != nil {
		return ProviderList{}, err
	}
	for field, id := range map[string]string{"defaultId": defaultID, "criticDefaultId": criticID} {
		if id != "" && !slices.ContainsFunc(all, func(p Provider) bool { return p.ID == id }) {
			return ProviderList{}, &FieldError{field, fmt.Sprintf("no provider has id %q", id)}
		}
	}
	if err := s.repo.SetSetting(ctx, defaultProviderKey, defaultID); err != nil {
		return ProviderList{}, err
	}
	if err := s.repo.SetSetting(ctx, criticProviderKey, criticID); err != nil {
		return ProviderList{}, err
	}
	s.publish(ctx)
	return s.List(ctx)
}

// Resolve returns a provider with its key, by id or by name; "" means the default and
// "critic" the critic default (falling back to the default).
func (s *Providers) Resolve(ctx context.Context, ref string) (Resolved, error) {
	list, err := s.List(ctx)
	if err != nil {
		return Resolved{}, err
	}
	switch ref {
	case "critic":
		ref = list.CriticDefaultID
		if ref == "" {
			ref = list.DefaultID
		}
	case "":
		ref = list.DefaultID
	}
	if ref == "" {
		if len(list.Providers) == 0 {
			return Resolved{}, ErrNoProvider
		}
		return Resolved{}, fmt.Errorf("%w (none is the default: pick one in Settings → Providers)", ErrNoProvider)
	}
	i := slices.IndexFunc(list.Providers, func(p Provider) bool { return p.ID == ref || strings.EqualFold(p.Name, ref) })
	if i < 0 {
		return Resolved{}, fmt.Errorf("provider %q: %w: see Settings → Providers for the configured ones", ref, ErrNotFound)
	}
	key, _, err := s.vault.Get(ctx, secretName(list.Providers[i].ID))
	if err != nil {
		return Resolved{}, err
	}
	return Resolved{Provider: list.Providers[i], APIKey: key}, nil
}

// Test checks that a saved provider answers.
func (s *Providers) Test(ctx context.Context, id string) (TestResult, error) {
	p, err := s.Resolve(ctx, id)
	if err != nil {
		return TestResult{}, err
	}
	if s.tester == nil {
		return TestResult{Message: "this build has no model layer to test with"}, nil
	}
	return s.tester.Test(ctx, p), nil
}

// TestUnsaved checks a provider as the add or edit form holds it, before anything is saved,
// so the form's "Test connection" can list the models to pick from. The model and name may
// still be empty. id names the provider being edited (empty when adding): its stored key is
// used when the form leaves the key unchanged.
func (s *Providers) TestUnsaved(ctx context.Context, id string, in ProviderInput) (TestResult, error) {
	model := strings.TrimSpace(in.Model)
	name := strings.TrimSpace(in.Name)
	if name == "" {
		in.Name = "unsaved" // validate wants one; what the test says uses "new provider"
	}
	if model == "" {
		in.Model = "unset" // validate wants one; the test then only lists models
	}
	// No other providers: a name another one uses is for Save to refuse, not the test.
	in, err := validate(in, nil, id)
	if err != nil {
		return TestResult{}, err
	}
	if name == "" {
		name = "new provider"
	}
	r := Resolved{Provider: Provider{ProviderSettings: in.ProviderSettings}}
	r.Name, r.Model = name, model
	switch {
	case in.APIKey != nil:
		r.APIKey = strings.TrimSpace(*in.APIKey)
	case id != "":
		if r.APIKey, _, err = s.vault.Get(ctx, secretName(id)); err != nil {
			return TestResult{}, err
		}
	}
	if msg := missingKey(r); msg != "" {
		return TestResult{}, &FieldError{"apiKey", msg}
	}
	if s.tester == nil {
		return TestResult{Message: "this build has no model layer to test with"}, nil
	}
	return s.tester.Test(ctx, r), nil
}

// missingKey says what to type when the form points at OpenAI's or Anthropic's own service
// without a key: the model layer would refuse it in its own words, naming the provider by a
// placeholder the person never typed. The form shows this under the API key field.
func missingKey(r Resolved) string {
	cfg := r.LLMConfig()
	cfg.Model = "unset" // only the key is judged here
	err := cfg.Validate()
	errs := []error{err}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		errs = joined.Unwrap()
	}
	for _, e := range errs {
		var fe *llm.FieldError
		if errors.As(e, &fe) && fe.Field == "apiKey" {
			vendor := "OpenAI"
			if r.Kind == KindAnthropic {
				vendor = "Anthropic"
			}
			return fmt.Sprintf("enter the %s key to test this provider", vendor)
		}
	}
	return ""
}

// Prices returns the per-model price table: the known models' list prices (with their cache
// prices) until the user saves a table of their own, then that table.
func (s *Providers) Prices(ctx context.Context) (map[string]Price, error) {
	prices := map[string]Price{}
	set, err := loadSetting(ctx, s.repo, pricesKey, &prices, "price table", "set it again in Settings")
	if err != nil {
		return map[string]Price{}, err
	}
	if !set {
		for model, p := range llm.KnownPrices() {
			prices[model] = Price(p)
		}
	}
	return prices, nil
}

// SetPrices replaces the price table.
func (s *Providers) SetPrices(ctx context.Context, prices map[string]Price) error {
	for model, p := range prices {
		if strings.TrimSpace(model) == "" {
			return &FieldError{"prices", "a model name is empty"}
		}
		for _, v := range []float64{p.InputPerMTok, p.OutputPerMTok, p.CachedInputPerMTok, p.CacheWritePerMTok} {
			if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
				return &FieldError{"prices", fmt.Sprintf("%s: prices must be zero or more USD per million tokens", model)}
			}
		}
	}
	return saveSetting(ctx, s.repo, pricesKey, prices)
}

// maskKey shows enough of a key to recognise it: "sk-…abcd".
func maskKey(key string) string {
	if key == "" {
		return ""
	}
	if len(key) <= 8 {
		return "…••••"
	}
	prefix := ""
	if i := strings.IndexAny(key, "-_"); i > 0 && i <= 4 {
		prefix = key[:i+1]
	}
	return prefix + "…" + key[len(key)-4:]
}

package llm

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"
)

// The wire protocols a provider can speak.
const (
	KindOpenAI    = "openai"    // OpenAI Chat Completions: OpenAI, Ollama, LM Studio, vLLM, llama.cpp, OpenRouter
	KindAnthropic = "anthropic" // Anthropic Messages
)

const (
	// DefaultTimeout is how long a provider waits for the server to send anything: the
	// response to start, or the next piece of a streamed one. Three minutes lets a slow local
	// model load and think before its first token, yet still ends a request a hung server
	// would keep forever.
	DefaultTimeout = 3 * time.Minute
	// DefaultMaxRetries bounds retries of 429, 5xx and dropped connections: enough to ride
	// out a blip, few enough that a dead server is reported within seconds.
	DefaultMaxRetries = 3
	// maxRetriesLimit stops a setting from hammering a server that is down.
	maxRetriesLimit = 10
)

// Config is one provider as the user set it up in Settings → Providers.
// Its String, GoString and LogValue mask the key, so it can be printed and logged.
type Config struct {
	Name string `json:"name"`
	Kind string `json:"kind"` // KindOpenAI or KindAnthropic
	// BaseURL is the server's address; empty means the official service. For OpenAI-style
	// servers a bare host (http://localhost:11434) gets "/v1" appended.
	BaseURL string `json:"baseUrl,omitempty"`
	Model   string `json:"model"`
	// VisionModel, if set, answers the requests that carry images.
	VisionModel string `json:"visionModel,omitempty"`
	// APIKey is never marshalled: keys live in the secret store, not in settings JSON.
	APIKey      string   `json:"-"`
	Temperature *float64 `json:"temperature,omitempty"`
	// MaxTokens caps each reply; 0 leaves it to the server (Anthropic requires one, so 4096).
	MaxTokens int  `json:"maxTokens,omitempty"`
	Thinking  bool `json:"thinking,omitempty"`
	// ContextWindow is the model's context size in tokens; 0 means unknown (no trimming).
	ContextWindow int `json:"contextWindow,omitempty"`
	// Timeout is how long to wait for the server to send anything (default DefaultTimeout).
	Timeout time.Duration `json:"timeout,omitempty"`
	// MaxRetries: 0 means DefaultMaxRetries; a negative value turns retries off.
	MaxRetries int `json:"maxRetries,omitempty"`
}

// FieldError is a problem with one Config field.
type FieldError struct {
	Field   string // the field's JSON name, as the settings form knows it: "baseUrl", "apiKey"
	Problem string
}

func (e *FieldError) Error() string { return e.Problem }

// Validate checks the config and returns every problem, each a *FieldError naming its field.
func (c Config) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{Field: field, Problem: fmt.Sprintf(format, args...)})
	}
	if strings.TrimSpace(c.Name) == "" {
		bad("name", "the provider needs a name: give it one, e.g. \"Local Ollama\"")
	}
	switch c.Kind {
	case KindOpenAI, KindAnthropic:
	case "":
		bad("kind", "pick the protocol the server speaks: %q or %q", KindOpenAI, KindAnthropic)
	default:
		bad("kind", "unknown provider kind %q: use %q (OpenAI, Ollama, LM Studio, vLLM, llama.cpp, OpenRouter) or %q", c.Kind, KindOpenAI, KindAnthropic)
	}
	if c.BaseURL != "" {
		u, err := url.Parse(c.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("baseUrl", "base URL %q is not an http(s) address: use e.g. http://localhost:11434/v1, or leave it empty for the official service", c.BaseURL)
		}
	}
	if strings.TrimSpace(c.Model) == "" {
		bad("model", "the provider needs a model: pick one from the list, e.g. \"gpt-4o\" or \"claude-sonnet-4-5\"")
	}
	if c.APIKey == "" && c.needsKey() {
		bad("apiKey", "%s needs an API key: paste it into the API key field", c.officialName())
	}
	if t := c.Temperature; t != nil {
		top := 2.0
		if c.Kind == KindAnthropic {
			top = 1.0
		}
		if *t < 0 || *t > top {
			bad("temperature", "temperature %g is out of range: use a value from 0 to %g", *t, top)
		}
	}
	if c.MaxTokens < 0 {
		bad("maxTokens", "max tokens %d is negative: use 0 for the server's default or a positive limit", c.MaxTokens)
	}
	if c.ContextWindow < 0 {
		bad("contextWindow", "context window %d is negative: use 0 for unknown or the model's size in tokens", c.ContextWindow)
	}
	if c.Timeout < 0 {
		bad("timeout", "timeout %s is negative: use 0 for the default (%s)", c.Timeout, DefaultTimeout)
	}
	if c.MaxRetries > maxRetriesLimit {
		bad("maxRetries", "%d retries would hammer a server that is down: use at most %d", c.MaxRetries, maxRetriesLimit)
	}
	return errors.Join(errs...)
}

// Official reports whether the config points at the provider's own service
// (api.openai.com or api.anthropic.com).
func (c Config) Official() bool {
	if c.BaseURL == "" {
		return true
	}
	u, err := url.Parse(c.BaseURL)
	return err == nil && (u.Host == "api.openai.com" || u.Host == "api.anthropic.com")
}

func (c Config) needsKey() bool {
	return c.Official() && (c.Kind == KindOpenAI || c.Kind == KindAnthropic)
}

func (c Config) officialName() string {
	if c.Kind == KindAnthropic {
		return "Anthropic"
	}
	return "OpenAI"
}

// WithDefaults fills in the defaults: Timeout and MaxRetries.
func (c Config) WithDefaults() Config {
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	switch {
	case c.MaxRetries == 0:
		c.MaxRetries = DefaultMaxRetries
	case c.MaxRetries < 0:
		c.MaxRetries = 0
	}
	return c
}

// ModelFor picks the model for a request: its own override, else the vision model when it
// carries images and one is set, else the configured model.
func (c Config) ModelFor(req Request) string {
	switch {
	case req.Model != "":
		return req.Model
	case c.VisionModel != "" && req.HasImages():
		return c.VisionModel
	}
	return c.Model
}

// MaskKey shows enough of a key to tell keys apart and never enough to use one:
// "sk-proj-abc…wxyz" becomes "sk-…wxyz"; a short key becomes "…".
func MaskKey(key string) string {
	if key == "" {
		return ""
	}
	if len(key) < 12 {
		return "…"
	}
	prefix := ""
	if i := strings.IndexByte(key, '-'); i >= 0 && i <= 4 {
		prefix = key[:i+1]
	}
	return prefix + "…" + key[len(key)-4:]
}

// String describes the config with the key masked.
func (c Config) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s provider %q (model %q", c.Kind, c.Name, c.Model)
	if c.VisionModel != "" {
		fmt.Fprintf(&b, ", vision model %q", c.VisionModel)
	}
	if c.BaseURL != "" {
		fmt.Fprintf(&b, ", base URL %s", c.BaseURL)
	}
	if c.APIKey != "" {
		fmt.Fprintf(&b, ", key %s", MaskKey(c.APIKey))
	}
	b.WriteString(")")
	return b.String()
}

// GoString keeps %#v from printing the key.
func (c Config) GoString() string { return "llm.Config{" + c.String() + "}" }

// LogValue logs the config with the key masked.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("name", c.Name),
		slog.String("kind", c.Kind),
		slog.String("model", c.Model),
		slog.String("baseURL", c.BaseURL),
		slog.String("key", MaskKey(c.APIKey)),
	)
}

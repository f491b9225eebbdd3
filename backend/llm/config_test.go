package llm

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"
)

const secretKey = "sk-proj-SECRETSECRETSECRET-wxyz"

func temp(v float64) *float64 { return &v }

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	ok := Config{Name: "Local", Kind: KindOpenAI, BaseURL: "http://localhost:11434/v1", Model: "llama3"}
	tests := []struct {
		name   string
		edit   func(*Config)
		fields []string
	}{
		{"valid local server without a key", func(*Config) {}, nil},
		{"valid anthropic", func(c *Config) { c.Kind, c.BaseURL, c.APIKey, c.Temperature = KindAnthropic, "", secretKey, temp(1) }, nil},
		{"no name", func(c *Config) { c.Name = " " }, []string{"name"}},
		{"no kind", func(c *Config) { c.Kind = "" }, []string{"kind"}},
		{"unknown kind", func(c *Config) { c.Kind = "gemini" }, []string{"kind"}},
		{"bad base URL", func(c *Config) { c.BaseURL = "localhost:11434" }, []string{"baseUrl"}},
		{"ftp base URL", func(c *Config) { c.BaseURL = "ftp://host/v1" }, []string{"baseUrl"}},
		{"no model", func(c *Config) { c.Model = "" }, []string{"model"}},
		{"official OpenAI needs a key", func(c *Config) { c.BaseURL = "" }, []string{"apiKey"}},
		{"api.openai.com needs a key", func(c *Config) { c.BaseURL = "https://api.openai.com/v1" }, []string{"apiKey"}},
		{"official Anthropic needs a key", func(c *Config) { c.Kind, c.BaseURL = KindAnthropic, "" }, []string{"apiKey"}},
		{"temperature too high for anthropic", func(c *Config) { c.Kind, c.APIKey, c.Temperature = KindAnthropic, secretKey, temp(1.5) }, []string{"temperature"}},
		{"negative temperature", func(c *Config) { c.Temperature = temp(-0.1) }, []string{"temperature"}},
		{"negative numbers", func(c *Config) { c.MaxTokens, c.ContextWindow, c.Timeout = -1, -1, -time.Second }, []string{"maxTokens", "contextWindow", "timeout"}},
		{"too many retries", func(c *Config) { c.MaxRetries = 50 }, []string{"maxRetries"}},
		{"everything wrong", func(c *Config) { *c = Config{} }, []string{"name", "kind", "model"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := ok
			tc.edit(&c)
			err := c.Validate()
			var got []string
			for _, e := range unjoin(err) {
				var fe *FieldError
				if !errors.As(e, &fe) {
					t.Fatalf("error %v is not a *FieldError", e)
				}
				if fe.Problem == "" || !strings.Contains(fe.Error(), ":") {
					t.Errorf("%s: message %q does not say what to do", fe.Field, fe.Problem)
				}
				got = append(got, fe.Field)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.fields) {
				t.Fatalf("fields %v, want %v (err: %v)", got, tc.fields, err)
			}
		})
	}
}

func unjoin(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

func TestConfigDefaults(t *testing.T) {
	t.Parallel()
	c := Config{}.WithDefaults()
	if c.Timeout != DefaultTimeout || c.MaxRetries != DefaultMaxRetries {
		t.Fatalf("defaults: %v, %d", c.Timeout, c.MaxRetries)
	}
	if c := (Config{MaxRetries: -1}).WithDefaults(); c.MaxRetries != 0 {
		t.Fatalf("negative retries = %d, want 0 (off)", c.MaxRetries)
	}
	c = Config{Model: "text", VisionModel: "eyes"}
	if got := c.ModelFor(Request{Messages: []Message{UserText("hi")}}); got != "text" {
		t.Errorf("text request used %q", got)
	}
	if got := c.ModelFor(Request{Messages: []Message{UserText("look", Image{MediaType: "image/png", Data: []byte{1}})}}); got != "eyes" {
		t.Errorf("image request used %q", got)
	}
	if got := c.ModelFor(Request{Model: "over", Messages: []Message{ToolMessage(ToolResult{Images: []Image{{Data: []byte{1}}}})}}); got != "over" {
		t.Errorf("override ignored: %q", got)
	}
}

func TestMaskKey(t *testing.T) {
	t.Parallel()
	for key, want := range map[string]string{
		"":                          "",
		"short":                     "…",
		"sk-proj-abcdefghijkl-abcd": "sk-…abcd",
		"sk-ant-api03-xyz-9876":     "sk-…9876",
		"ollama1234567890":          "…7890",
	} {
		if got := MaskKey(key); got != want {
			t.Errorf("MaskKey(%q) = %q, want %q", key, got, want)
		}
	}
}

// TestConfigNeverPrintsKey formats and logs a config every way and greps for the key.
func TestConfigNeverPrintsKey(t *testing.T) {
	t.Parallel()
	c := Config{Name: "OpenAI", Kind: KindOpenAI, Model: "gpt-4o", APIKey: secretKey}
	var logs bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&logs, nil))
	logger.Info("config", "cfg", c, "ptr", &c)
	slog.New(slog.NewTextHandler(&logs, nil)).Info("config", "cfg", c)
	wrapped := struct{ Cfg Config }{c}
	outputs := []string{
		fmt.Sprintf("%v", c), fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", c), fmt.Sprintf("%s", c),
		fmt.Sprintf("%v", &c), fmt.Sprintf("%+v", wrapped), fmt.Sprint(c), logs.String(),
	}
	for _, out := range outputs {
		if strings.Contains(out, secretKey) || strings.Contains(out, "SECRET") {
			t.Fatalf("key leaked: %s", out)
		}
	}
	if !strings.Contains(fmt.Sprintf("%v", c), "sk-…wxyz") {
		t.Errorf("String does not show the masked key: %v", c)
	}
	if !strings.Contains(logs.String(), "sk-…wxyz") {
		t.Errorf("logs do not show the masked key: %s", logs.String())
	}
}

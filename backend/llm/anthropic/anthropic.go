// Package anthropic speaks the Anthropic Messages API natively, through the official SDK
// (github.com/anthropics/anthropic-sdk-go): content blocks, input_json_delta tool
// arguments, thinking blocks with their signatures, and images as base64 source blocks
// in user and tool_result content.
//
// Done here rather than by the SDK: <think> tags in text (some Anthropic-compatible
// servers send them), the idle timeout, typed errors, and mapping to llm events. Retries
// are the SDK's: exponential backoff with jitter on 408/409/429/5xx/529 and dropped
// connections, honouring Retry-After; tests check the wait.
package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/llm/internal/wire"
)

// officialBaseURL is used when the config names none.
const officialBaseURL = "https://api.anthropic.com/"

// Provider talks to the Anthropic API or a server that speaks it.
type Provider struct {
	cfg      llm.Config
	log      *slog.Logger
	base     string
	messages anthropic.MessageService
	models   anthropic.ModelService
}

// New returns a provider for cfg, which must have Kind "anthropic" and be valid.
func New(cfg llm.Config, opts ...llm.Option) (*Provider, error) {
	if cfg.Kind != llm.KindAnthropic {
		return nil, errors.New("anthropic.New: the config's kind is " + cfg.Kind + ", not " + llm.KindAnthropic)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.WithDefaults()
	o := llm.ApplyOptions(opts...)
	base := BaseURL(cfg.BaseURL)
	// The services are built from these options alone, not through anthropic.NewClient: that
	// reads ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN and ANTHROPIC_BASE_URL from the
	// environment, which could send a key from the shell to another server.
	ropts := []option.RequestOption{
		option.WithHTTPClient(o.HTTPClient),
		option.WithBaseURL(base),
		option.WithMaxRetries(cfg.MaxRetries),
	}
	if cfg.APIKey != "" {
		ropts = append(ropts, option.WithAPIKey(cfg.APIKey))
	}
	return &Provider{
		cfg:      cfg,
		log:      o.Logger.With("provider", cfg),
		base:     base,
		messages: anthropic.NewMessageService(ropts...),
		models:   anthropic.NewModelService(ropts...),
	}, nil
}

// BaseURL is the SDK base URL for a configured one: the official service when empty, and
// without a trailing /v1, since the SDK adds "v1/messages" itself.
func BaseURL(configured string) string {
	if configured == "" {
		return officialBaseURL
	}
	u := strings.TrimSuffix(configured, "/")
	u = strings.TrimSuffix(u, "/v1")
	return u + "/"
}

func (p *Provider) origin(model string) llm.Origin {
	return llm.Origin{Provider: p.cfg.Name, Model: model, BaseURL: p.base, APIKey: p.cfg.APIKey}
}

// attempt is the per-attempt middleware: watchdog, and a log line for each error response.
func (p *Provider) attempt(w *wire.Watchdog, model string) option.RequestOption {
	return option.WithMiddleware(func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		return w.Attempt(req, next, func(status int, retryAfter string) {
			p.log.Warn("llm: error response", "model", model, "status", status, "retryAfter", retryAfter)
		})
	})
}

// Stream sends req and streams the reply.
func (p *Provider) Stream(ctx context.Context, req llm.Request) (*llm.Stream, error) {
	params, info, err := p.params(req)
	if err != nil {
		return nil, err
	}
	p.log.Debug("llm: stream", "model", info.Model, "messages", len(req.Messages), "tools", len(req.Tools))
	wctx, w, stop := wire.Watch(ctx, p.cfg.Timeout)
	s := p.messages.NewStreaming(wctx, params, p.attempt(w, info.Model))
	if err := s.Err(); err != nil {
		stop()
		s.Close() // Best effort: there is no body to release after a failed start.
		return nil, p.classify(ctx, wctx, info.Model, err)
	}
	w.Kick()
	r := &eventReader{}
	pull := wire.Pull(&r.turn, s, w, stop, r.event, func(err error) error { return p.classify(ctx, wctx, info.Model, err) })
	return llm.NewStream(info, pull, func() error { stop(); return s.Close() }), nil
}

// sdkDeadlineMargin is how much later than the idle watchdog the SDK's per-attempt deadline
// of a non-streamed request falls.
const sdkDeadlineMargin = 30 * time.Second

// Complete sends req without streaming.
func (p *Provider) Complete(ctx context.Context, req llm.Request) (llm.Reply, error) {
	params, info, err := p.params(req)
	if err != nil {
		return llm.Reply{}, err
	}
	p.log.Debug("llm: complete", "model", info.Model, "messages", len(req.Messages), "tools", len(req.Tools))
	wctx, w, stop := wire.Watch(ctx, p.cfg.Timeout)
	defer stop()
	// An explicit per-attempt timeout keeps the SDK from refusing large max_tokens without
	// streaming. It is set past the watchdog's, which must fire first: a silent server is a
	// timeout, and the SDK's own deadline would read as an unreachable one.
	msg, err := p.messages.New(wctx, params, p.attempt(w, info.Model), option.WithRequestTimeout(p.cfg.Timeout+sdkDeadlineMargin))
	if err != nil {
		return llm.Reply{}, p.classify(ctx, wctx, info.Model, err)
	}
	return llm.Collect(llm.EventStream(info, message(msg)), nil)
}

// ListModels lists the models the API offers (GET /v1/models).
func (p *Provider) ListModels(ctx context.Context) ([]llm.ModelInfo, error) {
	wctx, w, stop := wire.Watch(ctx, p.cfg.Timeout)
	defer stop()
	var out []llm.ModelInfo
	pager := p.models.ListAutoPaging(wctx, anthropic.ModelListParams{}, p.attempt(w, ""))
	for pager.Next() {
		m := pager.Current()
		out = append(out, llm.ModelInfo{ID: m.ID, DisplayName: m.DisplayName})
	}
	if err := pager.Err(); err != nil {
		return nil, p.classify(ctx, wctx, "", err)
	}
	return out, nil
}

// statusOfType gives the status an error type stands for, for errors sent inside a stream
// after a 200.
var statusOfType = map[string]int{
	"invalid_request_error": http.StatusBadRequest,
	"authentication_error":  http.StatusUnauthorized,
	"permission_error":      http.StatusForbidden,
	"not_found_error":       http.StatusNotFound,
	"request_too_large":     http.StatusRequestEntityTooLarge,
	"rate_limit_error":      http.StatusTooManyRequests,
	"api_error":             http.StatusInternalServerError,
	"overloaded_error":      529, // Anthropic's "overloaded"
}

// classify turns an SDK or transport error into an *llm.Error.
func (p *Provider) classify(ctx, wctx context.Context, model string, err error) error {
	o := p.origin(model)
	var api *anthropic.Error
	if errors.As(err, &api) {
		var body struct {
			Error struct {
				Type    string `json:"type"`
				Message string `json:"message"`
			} `json:"error"`
		}
		json.Unmarshal([]byte(api.RawJSON()), &body) // Best effort: a non-JSON body leaves these empty.
		msg, typ := body.Error.Message, body.Error.Type
		if msg == "" {
			msg = api.RawJSON()
		}
		status := api.StatusCode
		if s, ok := statusOfType[typ]; ok && status < 400 {
			status = s
		}
		var h http.Header
		if api.Response != nil {
			h = api.Response.Header
		}
		return llm.HTTPError(o, status, typ, msg, wire.RetryAfter(h))
	}
	return llm.TransportError(o, ctx, wire.Idle(wctx), p.cfg.Timeout, err)
}

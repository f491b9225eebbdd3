// Package openai speaks the OpenAI Chat Completions protocol through the official SDK
// (github.com/openai/openai-go/v3). The base URL is configurable, so the same code serves
// OpenAI, Ollama, LM Studio, vLLM, llama.cpp's server and OpenRouter.
//
// What the SDK does not cover is done here: reasoning_content (a field outside the
// official schema, read from the raw chunk JSON), <think> tags in content, tool calls
// whose fragments arrive by index, the idle timeout, and typed errors. Retries are the
// SDK's: exponential backoff with jitter on 408/409/429/5xx and dropped connections,
// honouring Retry-After; tests check the wait.
package openai

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/llm/internal/wire"
)

// officialBaseURL is used when the config names none.
const officialBaseURL = "https://api.openai.com/v1/"

// Provider talks to one OpenAI-compatible server.
type Provider struct {
	cfg    llm.Config
	log    *slog.Logger
	base   string
	chat   openai.ChatCompletionService
	models openai.ModelService
}

// New returns a provider for cfg, which must have Kind "openai" and be valid.
func New(cfg llm.Config, opts ...llm.Option) (*Provider, error) {
	if cfg.Kind != llm.KindOpenAI {
		return nil, errors.New("openai.New: the config's kind is " + cfg.Kind + ", not " + llm.KindOpenAI)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.WithDefaults()
	o := llm.ApplyOptions(opts...)
	base := BaseURL(cfg.BaseURL)
	// The services are built from these options alone, not through openai.NewClient: that
	// reads OPENAI_API_KEY and OPENAI_BASE_URL from the environment, which would send the
	// user's OpenAI key to whatever local server this provider points at.
	ropts := []option.RequestOption{
		option.WithHTTPClient(o.HTTPClient),
		option.WithBaseURL(base),
		option.WithAPIKey(cfg.APIKey),
		option.WithMaxRetries(cfg.MaxRetries),
	}
	return &Provider{
		cfg:    cfg,
		log:    o.Logger.With("provider", cfg),
		base:   base,
		chat:   openai.NewChatCompletionService(ropts...),
		models: openai.NewModelService(ropts...),
	}, nil
}

// BaseURL is the SDK base URL for a configured one: the official service when empty, and
// "/v1" appended to a bare host, since every OpenAI-compatible server serves under /v1.
func BaseURL(configured string) string {
	if configured == "" {
		return officialBaseURL
	}
	u, err := url.Parse(configured)
	if err == nil && (u.Path == "" || u.Path == "/") {
		u.Path = "/v1"
		configured = u.String()
	}
	return strings.TrimSuffix(configured, "/") + "/"
}

func (p *Provider) origin(model string) llm.Origin {
	return llm.Origin{Provider: p.cfg.Name, Model: model, BaseURL: p.base, APIKey: p.cfg.APIKey}
}

// attempt is the per-attempt middleware: watchdog, and a log line for each retried error.
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
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	p.log.Debug("llm: stream", "model", info.Model, "messages", len(req.Messages), "tools", len(req.Tools))

	wctx, w, stop := wire.Watch(ctx, p.cfg.Timeout)
	s := p.chat.NewStreaming(wctx, params, p.attempt(w, info.Model))
	if err := s.Err(); err != nil {
		stop()
		s.Close() // Best effort: there is no body to release after a failed start.
		return nil, p.classify(ctx, wctx, info.Model, err)
	}
	w.Kick()
	r := &chunkReader{model: info.Model}
	pull := wire.Pull(&r.turn, s, w, stop, r.chunk, func(err error) error { return p.classify(ctx, wctx, info.Model, err) })
	return llm.NewStream(info, pull, func() error { stop(); return s.Close() }), nil
}

// Complete sends req without streaming.
func (p *Provider) Complete(ctx context.Context, req llm.Request) (llm.Reply, error) {
	params, info, err := p.params(req)
	if err != nil {
		return llm.Reply{}, err
	}
	p.log.Debug("llm: complete", "model", info.Model, "messages", len(req.Messages), "tools", len(req.Tools))
	wctx, w, stop := wire.Watch(ctx, p.cfg.Timeout)
	defer stop()
	res, err := p.chat.New(wctx, params, p.attempt(w, info.Model))
	if err != nil {
		return llm.Reply{}, p.classify(ctx, wctx, info.Model, err)
	}
	return llm.Collect(llm.EventStream(info, completion(res)), nil)
}

// ListModels lists the server's models (GET /models).
func (p *Provider) ListModels(ctx context.Context) ([]llm.ModelInfo, error) {
	wctx, w, stop := wire.Watch(ctx, p.cfg.Timeout)
	defer stop()
	var out []llm.ModelInfo
	pager := p.models.ListAutoPaging(wctx, p.attempt(w, ""))
	for pager.Next() {
		m := pager.Current()
		out = append(out, llm.ModelInfo{ID: m.ID, DisplayName: m.ID})
	}
	if err := pager.Err(); err != nil {
		return nil, p.classify(ctx, wctx, "", err)
	}
	return out, nil
}

// classify turns an SDK or transport error into an *llm.Error.
func (p *Provider) classify(ctx, wctx context.Context, model string, err error) error {
	o := p.origin(model)
	var api *openai.Error
	if errors.As(err, &api) {
		msg, code := api.Message, api.Code
		if code == "" {
			code = api.Type
		}
		if msg == "" {
			msg = api.RawJSON()
		}
		var h http.Header
		if api.Response != nil {
			h = api.Response.Header
		}
		return llm.HTTPError(o, api.StatusCode, code, msg, wire.RetryAfter(h))
	}
	var se *ssestream.StreamError
	if errors.As(err, &se) {
		// The server reported an error inside the stream (vLLM, OpenRouter do this), after
		// a 200 status; its code, when a number, is the status it would have sent.
		var body struct {
			Error struct {
				Message string `json:"message"`
				Type    string `json:"type"`
				Code    any    `json:"code"`
			} `json:"error"`
		}
		json.Unmarshal(se.Event.Data, &body) // Best effort: an unreadable body leaves the defaults.
		status := http.StatusInternalServerError
		if c, ok := body.Error.Code.(float64); ok && c >= 400 && c < 600 {
			status = int(c)
		}
		msg := body.Error.Message
		if msg == "" {
			msg = string(se.Event.Data)
		}
		return llm.HTTPError(o, status, body.Error.Type, msg, 0)
	}
	return llm.TransportError(o, ctx, wire.Idle(wctx), p.cfg.Timeout, err)
}

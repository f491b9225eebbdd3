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
	conn   *wire.Conn
	chat   openai.ChatCompletionService
	models openai.ModelService
}

// New returns a provider for cfg, which must have Kind "openai" and be valid.
func New(cfg llm.Config, opts ...llm.Option) (*Provider, error) {
	conn, o, err := wire.NewConn("openai", llm.KindOpenAI, cfg, opts, BaseURL)
	if err != nil {
		return nil, err
	}
	conn.APIError = apiError
	// The services are built from these options alone, not through openai.NewClient: that
	// reads OPENAI_API_KEY and OPENAI_BASE_URL from the environment, which would send the
	// user's OpenAI key to whatever local server this provider points at.
	ropts := []option.RequestOption{
		option.WithHTTPClient(o.HTTPClient),
		option.WithBaseURL(conn.Base),
		option.WithAPIKey(conn.Cfg.APIKey),
		option.WithMaxRetries(conn.Cfg.MaxRetries),
	}
	return &Provider{
		conn:   conn,
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

// attempt is the per-attempt middleware: watchdog, and a log line for each retried error.
func (p *Provider) attempt(w *wire.Watchdog, model string) option.RequestOption {
	return option.WithMiddleware(p.conn.Middleware(w, model))
}

// Stream sends req and streams the reply.
func (p *Provider) Stream(ctx context.Context, req llm.Request) (*llm.Stream, error) {
	params, info, err := p.params(req)
	if err != nil {
		return nil, err
	}
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	r := &chunkReader{model: info.Model}
	return wire.Stream(ctx, p.conn, req, info, &r.turn, r.chunk, func(wctx context.Context, w *wire.Watchdog) *ssestream.Stream[openai.ChatCompletionChunk] {
		return p.chat.NewStreaming(wctx, params, p.attempt(w, info.Model))
	})
}

// Complete sends req without streaming.
func (p *Provider) Complete(ctx context.Context, req llm.Request) (llm.Reply, error) {
	params, info, err := p.params(req)
	if err != nil {
		return llm.Reply{}, err
	}
	return wire.Complete(ctx, p.conn, req, info, func(wctx context.Context, w *wire.Watchdog) (*openai.ChatCompletion, error) {
		return p.chat.New(wctx, params, p.attempt(w, info.Model))
	}, completion)
}

// ListModels lists the server's models (GET /models).
func (p *Provider) ListModels(ctx context.Context) ([]llm.ModelInfo, error) {
	return wire.Models(ctx, p.conn, func(wctx context.Context, w *wire.Watchdog) wire.SDKStream[openai.Model] {
		return p.models.ListAutoPaging(wctx, p.attempt(w, ""))
	}, func(m openai.Model) llm.ModelInfo { return llm.ModelInfo{ID: m.ID, DisplayName: m.ID} })
}

// apiError turns the SDK's error of an error response, or of an error the server sent
// inside a stream, into an *llm.Error (nil for any other error).
func apiError(o llm.Origin, err error) error {
	var api *openai.Error
	if errors.As(err, &api) {
		msg, code := api.Message, api.Code
		if code == "" {
			code = api.Type
		}
		if msg == "" {
			msg = api.RawJSON()
		}
		return wire.HTTPError(o, api.Response, api.StatusCode, code, msg)
	}
	var se *ssestream.StreamError
	if !errors.As(err, &se) {
		return nil
	}
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

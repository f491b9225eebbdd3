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
	"net/http"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
	"github.com/anthropics/anthropic-sdk-go/packages/ssestream"

	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/llm/internal/wire"
)

// officialBaseURL is used when the config names none.
const officialBaseURL = "https://api.anthropic.com/"

// Provider talks to the Anthropic API or a server that speaks it.
type Provider struct {
	conn     *wire.Conn
	messages anthropic.MessageService
	models   anthropic.ModelService
}

// New returns a provider for cfg, which must have Kind "anthropic" and be valid.
func New(cfg llm.Config, opts ...llm.Option) (*Provider, error) {
	conn, o, err := wire.NewConn("anthropic", llm.KindAnthropic, cfg, opts, BaseURL)
	if err != nil {
		return nil, err
	}
	conn.APIError = apiError
	// The services are built from these options alone, not through anthropic.NewClient: that
	// reads ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN and ANTHROPIC_BASE_URL from the
	// environment, which could send a key from the shell to another server.
	ropts := []option.RequestOption{
		option.WithHTTPClient(o.HTTPClient),
		option.WithBaseURL(conn.Base),
		option.WithMaxRetries(conn.Cfg.MaxRetries),
	}
	if conn.Cfg.APIKey != "" {
		ropts = append(ropts, option.WithAPIKey(conn.Cfg.APIKey))
	}
	return &Provider{
		conn:     conn,
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

// attempt is the per-attempt middleware: watchdog, and a log line for each error response.
func (p *Provider) attempt(w *wire.Watchdog, model string) option.RequestOption {
	return option.WithMiddleware(p.conn.Middleware(w, model))
}

// Stream sends req and streams the reply.
func (p *Provider) Stream(ctx context.Context, req llm.Request) (*llm.Stream, error) {
	params, info, err := p.params(req)
	if err != nil {
		return nil, err
	}
	r := &eventReader{}
	return wire.Stream(ctx, p.conn, req, info, &r.turn, r.event, func(wctx context.Context, w *wire.Watchdog) *ssestream.Stream[anthropic.MessageStreamEventUnion] {
		return p.messages.NewStreaming(wctx, params, p.attempt(w, info.Model))
	})
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
	return wire.Complete(ctx, p.conn, req, info, func(wctx context.Context, w *wire.Watchdog) (*anthropic.Message, error) {
		// An explicit per-attempt timeout keeps the SDK from refusing large max_tokens without
		// streaming. It is set past the watchdog's, which must fire first: a silent server is a
		// timeout, and the SDK's own deadline would read as an unreachable one.
		return p.messages.New(wctx, params, p.attempt(w, info.Model), option.WithRequestTimeout(p.conn.Cfg.Timeout+sdkDeadlineMargin))
	}, message)
}

// ListModels lists the models the API offers (GET /v1/models).
func (p *Provider) ListModels(ctx context.Context) ([]llm.ModelInfo, error) {
	return wire.Models(ctx, p.conn, func(wctx context.Context, w *wire.Watchdog) wire.SDKStream[anthropic.ModelInfo] {
		return p.models.ListAutoPaging(wctx, anthropic.ModelListParams{}, p.attempt(w, ""))
	}, func(m anthropic.ModelInfo) llm.ModelInfo { return llm.ModelInfo{ID: m.ID, DisplayName: m.DisplayName} })
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

// apiError turns the SDK's error of an error response into an *llm.Error (nil for any
// other error).
func apiError(o llm.Origin, err error) error {
	var api *anthropic.Error
	if !errors.As(err, &api) {
		return nil
	}
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
	return wire.HTTPError(o, api.Response, status, typ, msg)
}

package wire

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/clusterspace/clusterspace/backend/llm"
)

// Conn is what a protocol provider (openai, anthropic) keeps beside its SDK services, and
// the plumbing both wrap around an SDK call the same way: the idle watchdog on every
// attempt, a log line for each error response, and errors classified into *llm.Error.
type Conn struct {
	Cfg  llm.Config
	Log  *slog.Logger
	Base string // the SDK base URL
	// APIError turns the SDK's own error types into an *llm.Error (see HTTPError), and
	// returns nil for any other error, which is then a transport error.
	APIError func(o llm.Origin, err error) error
}

// NewConn checks that cfg is of the kind the calling package speaks (pkg names it in the
// error) and valid, fills its defaults, and applies opts; base turns the configured base
// URL into the SDK's.
func NewConn(pkg, kind string, cfg llm.Config, opts []llm.Option, base func(string) string) (*Conn, llm.Options, error) {
	if cfg.Kind != kind {
		return nil, llm.Options{}, errors.New(pkg + ".New: the config's kind is " + cfg.Kind + ", not " + kind)
	}
	if err := cfg.Validate(); err != nil {
		return nil, llm.Options{}, err
	}
	cfg = cfg.WithDefaults()
	o := llm.ApplyOptions(opts...)
	return &Conn{Cfg: cfg, Log: o.Logger.With("provider", cfg), Base: base(cfg.BaseURL)}, o, nil
}

// Origin is who answered, for errors: the provider, the model and where it lives.
func (c *Conn) Origin(model string) llm.Origin {
	return llm.Origin{Provider: c.Cfg.Name, Model: model, BaseURL: c.Base, APIKey: c.Cfg.APIKey}
}

// Middleware is the per-attempt SDK middleware: it kicks the watchdog and logs each error
// response (both SDKs' option.Middleware have this type).
func (c *Conn) Middleware(w *Watchdog, model string) func(*http.Request, func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	return func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		return w.Attempt(req, next, func(status int, retryAfter string) {
			c.Log.Warn("llm: error response", "model", model, "status", status, "retryAfter", retryAfter)
		})
	}
}

// Classify turns an SDK or transport error of a request watched in wctx into an *llm.Error.
func (c *Conn) Classify(ctx, wctx context.Context, model string, err error) error {
	o := c.Origin(model)
	if typed := c.APIError(o, err); typed != nil {
		return typed
	}
	return llm.TransportError(o, ctx, Idle(wctx), c.Cfg.Timeout, err)
}

// HTTPError is the *llm.Error of an error response; res (nil when the SDK kept none) gives
// its Retry-After.
func HTTPError(o llm.Origin, res *http.Response, status int, code, msg string) error {
	var h http.Header
	if res != nil {
		h = res.Header
	}
	return llm.HTTPError(o, status, code, msg, RetryAfter(h))
}

// SDKCloser is an SDK stream that must be closed.
type SDKCloser[T any] interface {
	SDKStream[T]
	Close() error
}

// Stream starts a streamed request with start (under the watchdog, whose middleware it must
// pass to the SDK) and returns it as an llm.Stream: read feeds each SDK item into turn.
func Stream[T any, S SDKCloser[T]](ctx context.Context, c *Conn, req llm.Request, info llm.StreamInfo, turn *Turn, read func(T),
	start func(wctx context.Context, w *Watchdog) S) (*llm.Stream, error) {
	c.Log.Debug("llm: stream", "model", info.Model, "messages", len(req.Messages), "tools", len(req.Tools))
	wctx, w, stop := Watch(ctx, c.Cfg.Timeout)
	s := start(wctx, w)
	if err := s.Err(); err != nil {
		stop()
		s.Close() // Best effort: there is no body to release after a failed start.
		return nil, c.Classify(ctx, wctx, info.Model, err)
	}
	w.Kick()
	pull := Pull(turn, s, w, stop, read, func(err error) error { return c.Classify(ctx, wctx, info.Model, err) })
	return llm.NewStream(info, pull, func() error { stop(); return s.Close() }), nil
}

// Complete sends a request without streaming, with send (under the watchdog, whose
// middleware it must pass to the SDK), and collects the reply that events makes of the answer.
func Complete[R any](ctx context.Context, c *Conn, req llm.Request, info llm.StreamInfo,
	send func(wctx context.Context, w *Watchdog) (R, error), events func(R) []llm.Event) (llm.Reply, error) {
	c.Log.Debug("llm: complete", "model", info.Model, "messages", len(req.Messages), "tools", len(req.Tools))
	wctx, w, stop := Watch(ctx, c.Cfg.Timeout)
	defer stop()
	res, err := send(wctx, w)
	if err != nil {
		return llm.Reply{}, c.Classify(ctx, wctx, info.Model, err)
	}
	return llm.Collect(llm.EventStream(info, events(res)), nil)
}

// Models lists what the pager that list starts returns, each made a ModelInfo by info.
func Models[T any](ctx context.Context, c *Conn, list func(wctx context.Context, w *Watchdog) SDKStream[T], info func(T) llm.ModelInfo) ([]llm.ModelInfo, error) {
	wctx, w, stop := Watch(ctx, c.Cfg.Timeout)
	defer stop()
	var out []llm.ModelInfo
	pager := list(wctx, w)
	for pager.Next() {
		out = append(out, info(pager.Current()))
	}
	if err := pager.Err(); err != nil {
		return nil, c.Classify(ctx, wctx, "", err)
	}
	return out, nil
}

package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"
)

// ErrorKind is the kind of an *Error. The kinds are themselves errors, so callers write
// errors.Is(err, llm.Auth).
type ErrorKind string

const (
	Auth           ErrorKind = "auth"             // the key was refused (401, 403)
	RateLimit      ErrorKind = "rate_limit"       // 429 after the retries
	ContextTooLong ErrorKind = "context_too_long" // the conversation no longer fits the model
	ModelNotFound  ErrorKind = "model_not_found"  // 404: no such model (or a wrong base URL)
	Unavailable    ErrorKind = "unavailable"      // 5xx after the retries, or the server cannot be reached
	BadRequest     ErrorKind = "bad_request"      // the server rejected the request for another reason
	Canceled       ErrorKind = "canceled"         // the caller cancelled
	Timeout        ErrorKind = "timeout"          // no answer within the configured timeout
)

func (k ErrorKind) Error() string { return "llm: " + string(k) }

// Error is a failure talking to a model, worded for the person who has to fix it.
type Error struct {
	Kind ErrorKind
	// Status is the HTTP status, 0 when there was no response.
	Status int
	// Message says what happened and what to do. It never holds an API key.
	Message string
	// RetryAfter is how long the server asked the caller to wait (429, 503), if it did.
	RetryAfter time.Duration
	// Err is the underlying cause for failures without a response (context.Canceled,
	// a network error); nil for HTTP errors, whose text is in Message.
	Err error
}

func (e *Error) Error() string { return e.Message }

// Is matches the error's kind, so errors.Is(err, llm.RateLimit) works.
func (e *Error) Is(target error) bool {
	k, ok := target.(ErrorKind)
	return ok && k == e.Kind
}

func (e *Error) Unwrap() error { return e.Err }

// Origin names what a provider was talking to, for error messages.
type Origin struct {
	Provider string // the provider's name in Settings
	Model    string
	BaseURL  string
	APIKey   string // only used to scrub the key out of server messages
}

// contextTooLong matches the ways servers say a prompt does not fit: OpenAI
// ("maximum context length", context_length_exceeded), Anthropic ("prompt is too long"),
// vLLM, llama.cpp ("exceeds the available context size"), Ollama, OpenRouter.
var contextTooLong = regexp.MustCompile(`(?i)context[_ ]length|context (window|size)|maximum context|prompt is too long|too many tokens|input is too long|exceeds? the (available )?(context|max)|prompt too long|reduce the length`)

// HTTPError is the typed error for an HTTP error response. code is the provider's error
// code or type ("context_length_exceeded", "not_found_error"); message is the server's text.
func HTTPError(o Origin, status int, code, message string, retryAfter time.Duration) *Error {
	message = o.scrub(strings.TrimSpace(message))
	said := ""
	if message != "" {
		said = ": " + message
	}
	who := o.name()
	e := &Error{Status: status, RetryAfter: retryAfter}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		// The server's own words are left out: some echo part of the key back.
		e.Kind = Auth
		e.Message = fmt.Sprintf("the API key was refused by %s (HTTP %d): check it in Settings → Providers", who, status)
	case status == http.StatusTooManyRequests:
		e.Kind = RateLimit
		wait := "wait a minute"
		if retryAfter > 0 {
			wait = fmt.Sprintf("wait %s", retryAfter.Round(time.Second))
		}
		e.Message = fmt.Sprintf("%s is rate-limiting requests (HTTP 429)%s: %s and try again, or raise the account's limits", who, said, wait)
	case contextTooLong.MatchString(message+" "+code) && (status == http.StatusBadRequest || status == http.StatusRequestEntityTooLarge || status == http.StatusUnprocessableEntity || status >= 500):
		e.Kind = ContextTooLong
		e.Message = fmt.Sprintf("context too long for %s%s: start a fresh conversation, or set a smaller context window in Settings → Providers so the conversation is compacted sooner", o.model(), said)
	case status == http.StatusNotFound:
		e.Kind = ModelNotFound
		e.Message = fmt.Sprintf("%s was not found on %s (HTTP 404)%s: pick a model from the list in Settings → Providers (for Ollama, pull it first) and check the base URL", o.model(), who, said)
	case status == http.StatusRequestTimeout || status >= 500:
		e.Kind = Unavailable
		e.Message = fmt.Sprintf("%s is unavailable (HTTP %d)%s: try again later, or check the server", who, status, said)
	default:
		e.Kind = BadRequest
		e.Message = fmt.Sprintf("%s rejected the request (HTTP %d)%s", who, status, said)
	}
	return e
}

// TransportError is the typed error for a failure with no HTTP response. ctx is the
// caller's context; idle is true when the provider's own timeout cut the request.
func TransportError(o Origin, ctx context.Context, idle bool, timeout time.Duration, err error) *Error {
	var typed *Error
	if errors.As(err, &typed) {
		return typed
	}
	switch {
	case idle:
		return &Error{Kind: Timeout, Err: err, Message: fmt.Sprintf(
			"%s sent nothing for %s (model %s): the server may be overloaded or the model too slow; try again, or raise the timeout in Settings → Providers",
			o.name(), timeout, o.model())}
	case ctx.Err() != nil && errors.Is(context.Cause(ctx), context.DeadlineExceeded):
		return &Error{Kind: Timeout, Err: ctx.Err(), Message: fmt.Sprintf("the request to %s ran past its deadline", o.name())}
	case ctx.Err() != nil:
		return &Error{Kind: Canceled, Err: ctx.Err(), Message: fmt.Sprintf("the request to %s was cancelled", o.name())}
	}
	return &Error{Kind: Unavailable, Err: err, Message: fmt.Sprintf(
		"could not reach %s at %s (%s): check that the server is running and the base URL in Settings → Providers",
		o.name(), o.BaseURL, o.scrub(err.Error()))}
}

func (o Origin) name() string {
	if o.Provider == "" {
		return "the model server"
	}
	return fmt.Sprintf("provider %q", o.Provider)
}

func (o Origin) model() string {
	if o.Model == "" {
		return "the model"
	}
	return fmt.Sprintf("model %q", o.Model)
}

// scrub removes the API key from s, in case a server or library echoed it.
func (o Origin) scrub(s string) string {
	if len(o.APIKey) < 4 {
		return s
	}
	return strings.ReplaceAll(s, o.APIKey, MaskKey(o.APIKey))
}

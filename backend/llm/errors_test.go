package llm

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestHTTPError(t *testing.T) {
	t.Parallel()
	o := Origin{Provider: "Work", Model: "gpt-4o", BaseURL: "https://api.openai.com/v1/", APIKey: secretKey}
	tests := []struct {
		name          string
		status        int
		code, message string
		kind          ErrorKind
		says          []string
	}{
		{"401", 401, "invalid_api_key", "Incorrect API key provided: " + secretKey, Auth, []string{"API key was refused", "Settings → Providers"}},
		{"403", 403, "permission_error", "no", Auth, []string{"API key was refused"}},
		{"429", 429, "rate_limit_exceeded", "slow down", RateLimit, []string{"rate-limiting", "wait 20s"}},
		{"openai context", 400, "context_length_exceeded", "This model's maximum context length is 8192 tokens.", ContextTooLong, []string{`context too long for model "gpt-4o"`, "8192"}},
		{"anthropic context", 400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum", ContextTooLong, []string{"context too long", "210000"}},
		{"llama.cpp context", 400, "", "the request exceeds the available context size, try increasing it", ContextTooLong, []string{"context too long"}},
		{"404 model", 404, "model_not_found", "The model `nope` does not exist", ModelNotFound, []string{"was not found", "Settings → Providers"}},
		{"500", 500, "server_error", "boom", Unavailable, []string{"unavailable (HTTP 500)", "try again later"}},
		{"529 overloaded", 529, "overloaded_error", "Overloaded", Unavailable, []string{"Overloaded"}},
		{"other 400", 400, "invalid_request_error", "messages: field required", BadRequest, []string{"rejected the request", "field required"}},
	}
	for _, tc := range tests {
		e := HTTPError(o, tc.status, tc.code, tc.message, 20*time.Second)
		if e.Kind != tc.kind || !errors.Is(e, tc.kind) {
			t.Errorf("%s: kind %s, want %s", tc.name, e.Kind, tc.kind)
		}
		for _, s := range tc.says {
			if !strings.Contains(e.Error(), s) {
				t.Errorf("%s: %q does not say %q", tc.name, e.Error(), s)
			}
		}
		if strings.Contains(e.Error(), secretKey) {
			t.Errorf("%s: key in message %q", tc.name, e.Error())
		}
		for _, other := range []ErrorKind{Auth, RateLimit, ContextTooLong, ModelNotFound, Unavailable, BadRequest, Canceled, Timeout} {
			if other != tc.kind && errors.Is(e, other) {
				t.Errorf("%s: also matches %s", tc.name, other)
			}
		}
	}
	if e := HTTPError(o, http.StatusInternalServerError, "", "key was "+secretKey, 0); strings.Contains(e.Error(), secretKey) {
		t.Errorf("key not scrubbed: %s", e)
	}
}

func TestTransportError(t *testing.T) {
	t.Parallel()
	o := Origin{Provider: "Local", Model: "llama3", BaseURL: "http://127.0.0.1:1/v1/"}
	live := context.Background()
	canceled, cancel := context.WithCancel(live)
	cancel()
	expired, cancel2 := context.WithTimeout(live, -time.Second)
	defer cancel2()

	e := TransportError(o, live, true, time.Minute, context.Canceled)
	if !errors.Is(e, Timeout) || !strings.Contains(e.Error(), "sent nothing for 1m0s") {
		t.Errorf("idle: %v", e)
	}
	e = TransportError(o, canceled, false, time.Minute, context.Canceled)
	if !errors.Is(e, Canceled) || !errors.Is(e, context.Canceled) {
		t.Errorf("canceled: %v", e)
	}
	e = TransportError(o, expired, false, time.Minute, context.DeadlineExceeded)
	if !errors.Is(e, Timeout) {
		t.Errorf("deadline: %v", e)
	}
	e = TransportError(o, live, false, time.Minute, io.ErrUnexpectedEOF)
	if !errors.Is(e, Unavailable) || !strings.Contains(e.Error(), "could not reach") || !strings.Contains(e.Error(), "base URL") {
		t.Errorf("network: %v", e)
	}
	typed := &Error{Kind: RateLimit, Message: "x"}
	if got := TransportError(o, live, false, time.Minute, typed); got != typed {
		t.Errorf("a typed error was rewrapped: %v", got)
	}
}

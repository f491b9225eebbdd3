package providers_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
)

func TestRateLimitThenSuccessWaitsRetryAfter(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, kind string) {
		r := newRig(t, kind, llmtest.Script{Replies: []llmtest.Reply{llmtest.RateLimited(1), llmtest.Text("ok after waiting")}})
		start := time.Now()
		reply, _, err := r.stream(t, ask("hi"))
		elapsed := time.Since(start)
		if err != nil {
			t.Fatal(err)
		}
		if reply.Message.Text() != "ok after waiting" {
			t.Fatalf("text %q", reply.Message.Text())
		}
		if elapsed < time.Second {
			t.Fatalf("retried after %s, before the 1s Retry-After", elapsed)
		}
		r.attempts(t, 2, "one 429, then the answer")
		if !strings.Contains(r.logs.String(), "status=429") {
			t.Errorf("the retried 429 was not logged:\n%s", r.logs.String())
		}
	})
}

func TestRateLimitRetriesRunOut(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, kind string) {
		r := newRig(t, kind, llmtest.Script{Replies: []llmtest.Reply{{Fault: &llmtest.Fault{Status: 429, RetryAfter: 1}, Repeat: 2}}},
			func(c *llm.Config) { c.MaxRetries = 1 })
		_, _, err := r.stream(t, ask("hi"))
		var e *llm.Error
		if !errors.As(err, &e) || !errors.Is(err, llm.RateLimit) || e.RetryAfter != time.Second || e.Status != 429 {
			t.Fatalf("err %#v", err)
		}
		if !strings.Contains(e.Message, "wait 1s") {
			t.Errorf("message %q", e.Message)
		}
	})
}

func TestServerErrorsUntilRetriesRunOut(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, kind string) {
		// The default retry count (3) means 4 attempts.
		r := newRig(t, kind, llmtest.Script{Replies: []llmtest.Reply{{Fault: &llmtest.Fault{Status: 500}, Repeat: 4}}})
		start := time.Now()
		_, _, err := r.stream(t, ask("hi"))
		var e *llm.Error
		if !errors.As(err, &e) || e.Kind != llm.Unavailable || e.Status != 500 {
			t.Fatalf("err %v", err)
		}
		if !strings.Contains(e.Message, "try again later") {
			t.Errorf("message %q", e.Message)
		}
		r.attempts(t, 4, "1 + 3 retries")
		// Backoff 0.5s, 1s, 2s less up to a quarter of jitter: at least 2.6s in all.
		if elapsed := time.Since(start); elapsed < 2600*time.Millisecond {
			t.Errorf("retries took %s: no exponential backoff", elapsed)
		}
	})
}

func TestRetriesOff(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, kind string) {
		r := newRig(t, kind, llmtest.Script{Replies: []llmtest.Reply{llmtest.Failing(503)}}, func(c *llm.Config) { c.MaxRetries = -1 })
		if _, _, err := r.stream(t, ask("hi")); !errors.Is(err, llm.Unavailable) {
			t.Fatalf("err %v", err)
		}
		r.attempts(t, 1, "retries are off")
	})
}

func TestAuthError(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, kind string) {
		r := newRig(t, kind, llmtest.Script{Replies: []llmtest.Reply{llmtest.Failing(401)}})
		_, _, err := r.stream(t, ask("hi"))
		if !errors.Is(err, llm.Auth) || !strings.Contains(err.Error(), "check it in Settings → Providers") {
			t.Fatalf("err %v", err)
		}
		r.attempts(t, 1, "a refused key is not retried")
	})
}

func TestWrongKeyIsRefused(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, kind string) {
		r := newRig(t, kind, llmtest.Script{APIKey: "sk-the-right-one-000000", Replies: []llmtest.Reply{llmtest.Text("never")}})
		_, _, err := r.stream(t, ask("hi"))
		if !errors.Is(err, llm.Auth) {
			t.Fatalf("err %v", err)
		}
		if _, err := r.p.ListModels(ctx(t)); !errors.Is(err, llm.Auth) {
			t.Fatalf("ListModels err %v", err)
		}
		rec := r.srv.Requests()[0]
		sent := rec.Header.Get("Authorization") + rec.Header.Get("X-Api-Key")
		if !strings.Contains(sent, testKey) {
			t.Errorf("the configured key was not sent: %q", sent)
		}
	})
}

func TestModelNotFoundAndContextTooLong(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, kind string) {
		r := newRig(t, kind, llmtest.Script{Replies: []llmtest.Reply{
			llmtest.Failing(404),
			{Fault: &llmtest.Fault{Status: 400, Message: "prompt is too long: 210000 tokens > 200000 maximum"}},
		}})
		_, _, err := r.stream(t, ask("hi"))
		if !errors.Is(err, llm.ModelNotFound) || !strings.Contains(err.Error(), `"scripted-model"`) {
			t.Fatalf("404: %v", err)
		}
		_, err = r.p.Complete(ctx(t), ask("hi"))
		if !errors.Is(err, llm.ContextTooLong) || !strings.Contains(err.Error(), `context too long for model "scripted-model"`) {
			t.Fatalf("400: %v", err)
		}
	})
}

func TestCancelEndsStalledStreamFast(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, kind string) {
		r := newRig(t, kind, llmtest.Script{Replies: []llmtest.Reply{llmtest.Stalled("partial answer before the stall", 5)}})
		c, cancel := context.WithCancel(ctx(t))
		defer cancel()
		s, err := r.p.Stream(c, ask("hi"))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		for s.Next() {
			if s.Event().Kind == llm.EventText {
				break
			}
		}
		canceled := make(chan time.Time, 1)
		go func() {
			time.Sleep(200 * time.Millisecond) // let Next block on the stalled connection
			canceled <- time.Now()
			cancel()
		}()
		for s.Next() {
		}
		latency := time.Since(<-canceled)
		if latency >= time.Second {
			t.Fatalf("cancel took %s to end the stream", latency)
		}
		t.Logf("%s: cancel ended the stalled stream in %s", kind, latency)
		if !errors.Is(s.Err(), llm.Canceled) || !errors.Is(s.Err(), context.Canceled) {
			t.Fatalf("err %v", s.Err())
		}
		checkErrText(t, s.Err())
	})
}

func TestIdleTimeout(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, kind string) {
		r := newRig(t, kind, llmtest.Script{Replies: []llmtest.Reply{llmtest.Stalled("slow", 5), {Text: "slow whole", Fault: &llmtest.Fault{Stall: true}}}},
			// No retries: under load a retry would spend the script's second reply.
			func(c *llm.Config) { c.Timeout, c.MaxRetries = time.Second, -1 })
		start := time.Now()
		_, _, err := r.stream(t, ask("hi"))
		if !errors.Is(err, llm.Timeout) || !strings.Contains(err.Error(), "sent nothing for 1s") {
			t.Fatalf("stream err %v", err)
		}
		_, err = r.p.Complete(ctx(t), ask("hi"))
		if !errors.Is(err, llm.Timeout) {
			t.Fatalf("complete err %v", err)
		}
		if elapsed := time.Since(start); elapsed > 5*time.Second {
			t.Errorf("timeouts took %s", elapsed)
		}
	})
}

func TestUnreachableServer(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, kind string) {
		srv := llmtest.New(nil, llmtest.Script{})
		url := srv.URL
		srv.Close() // nothing listens there now
		p := mustProvider(t, llm.Config{Name: "Gone", Kind: kind, BaseURL: url, Model: "m", APIKey: testKey, MaxRetries: -1})
		_, err := p.Stream(ctx(t), ask("hi"))
		if !errors.Is(err, llm.Unavailable) || !strings.Contains(err.Error(), "could not reach") {
			t.Fatalf("err %v", err)
		}
		checkErrText(t, err)
	})
}

func TestExhaustedScriptFailsAtOnce(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, kind string) {
		srv := llmtest.New(nil, llmtest.Script{}) // nil: this test wants the exhaustion
		defer srv.Close()
		p := mustProvider(t, llm.Config{Name: "x", Kind: kind, BaseURL: srv.URL, Model: "m"})
		_, err := p.Stream(ctx(t), ask("hi"))
		if err == nil || !strings.Contains(err.Error(), "script is exhausted") {
			t.Fatalf("err %v", err)
		}
		if n := len(srv.Requests()); n != 1 {
			t.Fatalf("an exhausted script was retried: %d requests", n)
		}
	})
}

// TestKeyNeverLeaks drives every path that logs or fails and greps it all for the key.
func TestKeyNeverLeaks(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, kind string) {
		r := newRig(t, kind, llmtest.Script{Replies: []llmtest.Reply{
			llmtest.RateLimited(1), llmtest.Text("fine"),
			{Fault: &llmtest.Fault{Status: 401, Message: "Incorrect API key provided: " + testKey}},
			{Fault: &llmtest.Fault{Status: 400, Message: "bad request for key " + testKey}},
			{Fault: &llmtest.Fault{Status: 500, Message: "oops " + testKey}, Repeat: 4},
		}})
		var texts []string
		for range 4 {
			_, _, err := r.stream(t, ask("hi"))
			if err != nil {
				texts = append(texts, err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err))
			}
		}
		if len(texts) != 9 {
			t.Fatalf("want three failures, got %d texts: %q", len(texts)/3, texts)
		}
		texts = append(texts, fmt.Sprintf("%v", r.cfg), fmt.Sprintf("%+v", r.cfg), fmt.Sprintf("%#v", r.cfg), r.logs.String())
		for _, s := range texts {
			if strings.Contains(s, testKey) || strings.Contains(s, "SECRET") {
				t.Fatalf("the key leaked: %s", s)
			}
		}
		if !strings.Contains(r.logs.String(), "sk-…abcd") {
			t.Errorf("the logs never named the provider (masked):\n%s", r.logs.String())
		}
	})
}

// TestEnvironmentKeysAreNotSent: the SDKs' own clients read OPENAI_API_KEY and
// ANTHROPIC_API_KEY; a provider for a local server must not send them anywhere.
func TestEnvironmentKeysAreNotSent(t *testing.T) {
	const envKey = "sk-from-the-environment-9999"
	t.Setenv("OPENAI_API_KEY", envKey)
	t.Setenv("ANTHROPIC_API_KEY", envKey)
	t.Setenv("ANTHROPIC_AUTH_TOKEN", envKey)
	for _, kind := range kinds {
		srv := llmtest.New(t, llmtest.Script{Replies: []llmtest.Reply{llmtest.Text("hi")}})
		p := mustProvider(t, llm.Config{Name: "Local", Kind: kind, BaseURL: srv.URL, Model: "m"})
		s, err := p.Stream(ctx(t), ask("hi"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := llm.Collect(s, nil); err != nil {
			t.Fatal(err)
		}
		for name, values := range srv.Requests()[0].Header {
			for _, v := range values {
				if strings.Contains(v, envKey) {
					t.Fatalf("%s sent the environment's key in %s", kind, name)
				}
			}
		}
		if got := srv.Requests()[0].Path; got != "/v1/chat/completions" && got != "/v1/messages" {
			t.Errorf("%s went to %s, not the configured server", kind, got)
		}
	}
}

func TestCloseFromAnotherGoroutineEndsTheStream(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, kind string) {
		r := newRig(t, kind, llmtest.Script{Replies: []llmtest.Reply{llmtest.Stalled("partial answer before the stall", 5)}})
		s, err := r.p.Stream(ctx(t), ask("hi"))
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			time.Sleep(200 * time.Millisecond)
			s.Close()
		}()
		start := time.Now()
		for s.Next() {
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("Close took %s to end the stream", d)
		}
	})
}

package providers_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/internal/syncbuf"
	"github.com/clusterspace/clusterspace/backend/llm"
	"github.com/clusterspace/clusterspace/backend/llm/llmtest"
	"github.com/clusterspace/clusterspace/backend/llm/providers"
)

// testKey is the API key every test provider uses; no log line, error or printed config
// may ever contain it.
const testKey = "sk-test-SECRET0123456789-abcd"

var kinds = []string{llm.KindOpenAI, llm.KindAnthropic}

// rig is a provider of one kind wired to its own scripted server.
type rig struct {
	kind string
	cfg  llm.Config
	p    llm.Provider
	srv  *llmtest.Server
	logs *syncbuf.Buffer
}

// newRig starts a scripted server requiring testKey and a provider of kind pointed at it.
// When the test ends it checks that the logs never held the key.
func newRig(t *testing.T, kind string, script llmtest.Script, edit ...func(*llm.Config)) *rig {
	t.Helper()
	if script.APIKey == "" {
		script.APIKey = testKey
	}
	srv := llmtest.New(t, script)
	cfg := llm.Config{Name: "Scripted " + kind, Kind: kind, BaseURL: srv.URL, Model: "scripted-model", APIKey: testKey}
	for _, e := range edit {
		e(&cfg)
	}
	logs := &syncbuf.Buffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	p := mustProvider(t, cfg, llm.WithLogger(logger))
	t.Cleanup(func() {
		if strings.Contains(logs.String(), testKey) {
			t.Errorf("the API key appears in the logs:\n%s", logs.String())
		}
	})
	return &rig{kind: kind, cfg: cfg, p: p, srv: srv, logs: logs}
}

// mustProvider is the provider of cfg, failing the test if cfg makes none.
func mustProvider(t *testing.T, cfg llm.Config, opts ...llm.Option) llm.Provider {
	t.Helper()
	p, err := providers.New(cfg, opts...)
	if err != nil {
		t.Fatalf("providers.New(%v): %v", cfg, err)
	}
	return p
}

// each runs fn for both protocols, in parallel.
func each(t *testing.T, fn func(t *testing.T, kind string)) {
	t.Helper()
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			fn(t, kind)
		})
	}
}

// ctx is a test context that cannot hang a test forever.
func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// stream sends req and collects the reply and every event.
func (r *rig) stream(t *testing.T, req llm.Request) (llm.Reply, []llm.Event, error) {
	t.Helper()
	s, err := r.p.Stream(ctx(t), req)
	if err != nil {
		checkErrText(t, err)
		return llm.Reply{}, nil, err
	}
	var events []llm.Event
	reply, err := llm.Collect(s, func(ev llm.Event) { events = append(events, ev) })
	if err != nil {
		checkErrText(t, err)
	}
	return reply, events, err
}

// mustStream streams req, failing the test if the stream fails.
func (r *rig) mustStream(t *testing.T, req llm.Request) (llm.Reply, []llm.Event) {
	t.Helper()
	reply, events, err := r.stream(t, req)
	if err != nil {
		t.Fatal(err)
	}
	return reply, events
}

// attempts fails the test unless the server saw want chat requests; why says what that
// count means.
func (r *rig) attempts(t *testing.T, want int, why string) {
	t.Helper()
	if n := len(r.srv.ChatRequests()); n != want {
		t.Fatalf("%d attempts, want %d: %s", n, want, why)
	}
}

// checkErrText fails if an error a person will read holds the key or is not typed.
func checkErrText(t *testing.T, err error) {
	t.Helper()
	if strings.Contains(err.Error(), testKey) {
		t.Errorf("the API key appears in an error: %v", err)
	}
	var e *llm.Error
	if !asLLM(err, &e) {
		t.Errorf("error %v (%T) is not an *llm.Error", err, err)
	}
}

func ask(text string) llm.Request {
	return llm.Request{System: "You are the agent.", Messages: []llm.Message{llm.UserText(text)}}
}

func kindsOf(events []llm.Event, kind llm.EventKind) []llm.Event {
	var out []llm.Event
	for _, ev := range events {
		if ev.Kind == kind {
			out = append(out, ev)
		}
	}
	return out
}

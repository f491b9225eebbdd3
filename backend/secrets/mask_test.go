package secrets

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/clusterspace/clusterspace/backend/internal/syncbuf"
)

// Every form a value takes in text is masked with the marker of its kind: as it is, and
// escaped inside a JSON string both as Go writes it (<>& escaped) and as JavaScript does.
func TestMaskerHidesEveryFormOfAValue(t *testing.T) {
	t.Parallel()
	m := NewMasker()
	const pw = `S3cret-"quoted"<&>\x`
	m.Hold(pw, "login password")
	m.Hold("sk-live-abcdef123456", "provider api key")
	for _, tc := range []struct{ in, want string }{
		{"pw is " + pw + ".", "pw is [secret: login password]."},
		{`{"v":"S3cret-\"quoted\"<&>\\x"}`, `{"v":"[secret: login password]"}`},
		{`{"v":"S3cret-\"quoted\"\u003c\u0026\u003e\\x"}`, `{"v":"[secret: login password]"}`},
		{"Bearer sk-live-abcdef123456 and sk-live-abcdef123456", "Bearer [secret: provider api key] and [secret: provider api key]"},
		{"nothing here", "nothing here"},
	} {
		if got := m.Mask(tc.in); got != tc.want {
			t.Errorf("Mask(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// Masking masked text changes nothing, even where a value is a part of a marker; a value
// that holds another is masked whole; values too short to be worth it are left alone.
func TestMaskingIsStable(t *testing.T) {
	t.Parallel()
	m := NewMasker()
	m.Hold("login password", "login password") // a (silly) value that is part of its own marker
	m.Hold("tok-123456", "short token")
	m.Hold("Bearer tok-123456-long", "header")
	m.Hold("abc", "too short")
	once := m.Mask("a login password, Bearer tok-123456-long, tok-123456, abc")
	want := "a [secret: login password], [secret: header], [secret: short token], abc"
	if once != want {
		t.Fatalf("once: %q, want %q", once, want)
	}
	if twice := m.Mask(once); twice != once {
		t.Errorf("masking again changed %q into %q", once, twice)
	}
	if got := cleanKind(`bad "kind" [x]` + "\n"); got != "bad _kind_ _x__" {
		t.Errorf("cleanKind: %q", got)
	}
	var none *Masker
	if none.Mask("tok-123456") != "tok-123456" {
		t.Error("a nil masker masks")
	}
}

// A source is asked at every Mask: what it adds counts at once, and what it drops stays
// masked (it may still sit in a terminal's scrollback).
func TestMaskerFollowsItsSources(t *testing.T) {
	t.Parallel()
	m := NewMasker()
	var mu sync.Mutex
	values := map[string]string{"mcp-token-1": "MCP server a env TOKEN"}
	m.Watch(func() map[string]string {
		mu.Lock()
		defer mu.Unlock()
		return values
	})
	m.Hold("held-secret", "login password")
	if got := m.Mask("mcp-token-1 held-secret"); got != "[secret: MCP server a env TOKEN] [secret: login password]" {
		t.Fatalf("first: %q", got)
	}
	mu.Lock()
	values = map[string]string{"mcp-token-2": "MCP server a env TOKEN"}
	mu.Unlock()
	if got := m.Mask("mcp-token-1 mcp-token-2 held-secret"); got != "[secret: MCP server a env TOKEN] [secret: MCP server a env TOKEN] [secret: login password]" {
		t.Errorf("after the source changed: %q", got)
	}
}

// The vault teaches its masker every secret: those stored before it opened, those stored
// since, and those read; a deleted one stays masked (it may still sit in a page).
func TestVaultTeachesTheMasker(t *testing.T) {
	v, st, dir := openVault(t, Options{NoKeyring: true})
	ctx := context.Background()
	if err := v.Set(ctx, "login/login-1/password", "Pw-before-open"); err != nil {
		t.Fatal(err)
	}
	m := NewMasker()
	v, err := Open(ctx, dir, st, Options{NoKeyring: true, Masker: m})
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Set(ctx, "provider/openai/api_key", "sk-after-open-123"); err != nil {
		t.Fatal(err)
	}
	if err := v.Delete(ctx, "login/login-1/password"); err != nil {
		t.Fatal(err)
	}
	got := m.Mask("Pw-before-open sk-after-open-123")
	if got != "[secret: login password] [secret: provider api key]" {
		t.Errorf("masked: %q", got)
	}
}

// No log record written through the masker's handler holds a secret: not its message, a
// string, an error, a group or an attribute added up front.
func TestLogHandlerMasksEveryAttribute(t *testing.T) {
	t.Parallel()
	m := NewMasker()
	m.Hold("S3cret-log-value", "login password")
	var out syncbuf.Buffer
	log := slog.New(m.LogHandler(slog.NewJSONHandler(&out, nil))).With("pre", "S3cret-log-value")
	log.WithGroup("g").Warn("saw S3cret-log-value", "s", "x S3cret-log-value", "err", errors.New("auth S3cret-log-value failed"),
		slog.Group("inner", "v", "S3cret-log-value"), "n", 3)
	got := out.String()
	if strings.Contains(got, "S3cret-log-value") || strings.Count(got, "[secret: login password]") != 5 || !strings.Contains(got, `"n":3`) {
		t.Errorf("log: %s", got)
	}
}

package secrets

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clusterspace/clusterspace/backend/internal/syncbuf"
	"github.com/clusterspace/clusterspace/backend/notify/notifytest"
	"github.com/clusterspace/clusterspace/backend/store"
	"github.com/clusterspace/clusterspace/backend/store/storetest"
)

func openStore(t *testing.T) (*store.Store, string) {
	t.Helper()
	return storetest.Open(t)
}

// openVault opens a vault with opts over a new store, failing the test if it cannot.
func openVault(t *testing.T, opts Options) (*Vault, *store.Store, string) {
	t.Helper()
	st, dir := openStore(t)
	v, err := Open(context.Background(), dir, st, opts)
	if err != nil {
		t.Fatal(err)
	}
	return v, st, dir
}

const apiKey = "sk-live-0123456789abcdefSECRET"

func TestFileBackendSealsSecrets(t *testing.T) {
	v, st, dir := openVault(t, Options{NoKeyring: true})
	ctx := context.Background()
	if v.Backend() != BackendFile {
		t.Fatalf("backend %s", v.Backend())
	}
	if err := v.Set(ctx, "provider/openai", apiKey); err != nil {
		t.Fatal(err)
	}
	got, ok, err := v.Get(ctx, "provider/openai")
	if err != nil || !ok || got != apiKey {
		t.Fatalf("get: %q %v %v", got, ok, err)
	}
	// The plain text is nowhere on disk: not in the database, its WAL, or anything else.
	st.Close()
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			if b, _ := os.ReadFile(p); bytes.Contains(b, []byte("0123456789abcdef")) {
				t.Errorf("%s contains the secret in plain text", p)
			}
		}
		return nil
	})
	if info, _ := os.Stat(filepath.Join(dir, keyFileName)); info.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %o", info.Mode().Perm())
	}
}

func TestSealedValueIsBoundToItsNameAndKey(t *testing.T) {
	v, st, dir := openVault(t, Options{NoKeyring: true})
	ctx := context.Background()
	v.Set(ctx, "a", "alpha")
	// Copying a's ciphertext under another name must not decrypt (the name is authenticated).
	row, _, _ := st.SecretRow(ctx, "a")
	row.Name = "b"
	st.PutSecretRow(ctx, row)
	if _, _, err := v.Get(ctx, "b"); err == nil {
		t.Fatal("a ciphertext moved to another name decrypted")
	}
	// A different key file cannot read it, and says what to do.
	os.Remove(filepath.Join(dir, keyFileName))
	v2, _ := Open(ctx, dir, st, Options{NoKeyring: true})
	if _, _, err := v2.Get(ctx, "a"); err == nil || !strings.Contains(err.Error(), "enter it again") {
		t.Fatalf("with another key: %v", err)
	}
	os.WriteFile(filepath.Join(dir, keyFileName), []byte("short\n"), 0o600)
	if _, err := Open(ctx, dir, st, Options{NoKeyring: true}); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Fatalf("damaged key file: %v", err)
	}
}

// memKeyring is a keyring whose behaviour a test picks: one that never answers (hang) cannot
// be had from a real daemon on demand. The real Secret Service is in keyring_test.go.
type memKeyring struct {
	mu   sync.Mutex
	m    map[string]string
	hang bool
}

func (k *memKeyring) Set(s, u, p string) error {
	if k.hang {
		time.Sleep(time.Hour)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.m[s+"|"+u] = p
	return nil
}
func (k *memKeyring) Get(s, u string) (string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	v, ok := k.m[s+"|"+u]
	if !ok {
		return "", errors.New("not found")
	}
	return v, nil
}
func (k *memKeyring) Delete(s, u string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.m, s+"|"+u)
	return nil
}

func TestKeyringBackendKeepsOnlyAMarkerInTheStore(t *testing.T) {
	st, dir := openStore(t)
	ctx := context.Background()
	kr := &memKeyring{m: map[string]string{}}
	v, _ := Open(ctx, dir, st, Options{Keyring: kr})
	if v.Backend() != BackendKeyring {
		t.Fatal("a working keyring was not used")
	}
	v.Set(ctx, "k", apiKey)
	row, _, _ := st.SecretRow(ctx, "k")
	if row.Backend != BackendKeyring || len(row.Ciphertext) != 0 {
		t.Fatalf("row %+v", row)
	}
	if got, _, _ := v.Get(ctx, "k"); got != apiKey {
		t.Fatal("keyring value lost")
	}
	v.Delete(ctx, "k")
	if len(kr.m) != 0 {
		t.Fatalf("keyring entries left: %v", kr.m)
	}
	if _, ok, _ := v.Get(ctx, "k"); ok {
		t.Fatal("deleted secret still found")
	}
}

func TestSilentKeyringFallsBackWithinTheTimeout(t *testing.T) {
	st, dir := openStore(t)
	start := time.Now()
	v, err := Open(context.Background(), dir, st, Options{Keyring: &memKeyring{m: map[string]string{}, hang: true}})
	if err != nil || v.Backend() != BackendFile {
		t.Fatalf("backend %v, %v", v.Backend(), err)
	}
	if d := time.Since(start); d > keyringProbeTimeout+time.Second {
		t.Fatalf("start-up waited %v for a silent keyring", d)
	}
}

// The keyring tests below run the real Secret Service: gnome-keyring-daemon (apt
// gnome-keyring) on a private session D-Bus that TestMain starts, as dbus-run-session would.
// The bus activates no services, so nothing starts a keyring behind a test's back: "no
// keyring" is real.

// secretsName is the Secret Service's name on the bus.
const secretsName = "org.freedesktop.secrets"

func TestMain(m *testing.M) {
	stop, err := notifytest.SessionBus()
	if err != nil {
		fmt.Fprintln(os.Stderr, "secrets tests:", err)
		os.Exit(1)
	}
	os.Unsetenv("DISPLAY") // a keyring's unlock prompt must fail, not open on a screen
	code := m.Run()
	stop()
	os.Exit(code)
}

// keyringDaemon is gnome-keyring-daemon with its keyrings in home.
type keyringDaemon struct {
	home string
	cmd  *exec.Cmd
}

// keyringPassword is the test login keyring's password.
const keyringPassword = "login-keyring-pw"

// startKeyring starts gnome-keyring-daemon on the test bus with its keyrings under home.
// unlock gives it the login password, as a desktop login does; without it an existing
// login keyring stays locked.
func startKeyring(t *testing.T, home string, unlock bool) *keyringDaemon {
	t.Helper()
	args := []string{"--foreground", "--components=secrets"}
	if unlock {
		args = append(args, "--unlock")
	}
	cmd := exec.Command("gnome-keyring-daemon", args...)
	run := filepath.Join(home, "run")
	os.MkdirAll(run, 0o700)
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_DATA_HOME="+filepath.Join(home, "data"), "XDG_RUNTIME_DIR="+run)
	if unlock {
		cmd.Stdin = strings.NewReader(keyringPassword)
	}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("gnome-keyring-daemon (scripts/setup.sh installs gnome-keyring): %v", err)
	}
	d := &keyringDaemon{home: home, cmd: cmd}
	t.Cleanup(d.stop)
	if !notifytest.WaitName(secretsName, true) {
		t.Fatalf("gnome-keyring-daemon did not take %s on the bus in 10 s:\n%s", secretsName, stderr.String())
	}
	return d
}

// stop ends the daemon and waits until the bus has no Secret Service.
func (d *keyringDaemon) stop() {
	if d.cmd.ProcessState != nil {
		return
	}
	d.cmd.Process.Kill()
	d.cmd.Wait()
	notifytest.WaitName(secretsName, false)
}

// secretTool looks a ClusterSpace entry up with libsecret's own client (apt libsecret-tools),
// not through the code under test.
func secretTool(t *testing.T, user string) (string, bool) {
	t.Helper()
	out, err := exec.Command("secret-tool", "lookup", "service", keyringService, "username", user).Output()
	return string(out), err == nil
}

// noPlainText fails if any file under dir holds s.
func noPlainText(t *testing.T, dir, s string) {
	t.Helper()
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			if b, _ := os.ReadFile(p); bytes.Contains(b, []byte(s)) {
				t.Errorf("%s contains the secret in plain text", p)
			}
		}
		return nil
	})
}

// TestRealKeyringHoldsTheSecrets stores an API key with an unlocked login keyring: the value
// is in the Secret Service (libsecret's secret-tool finds it), the database keeps only a
// marker, and no file in the data dir holds it. Deleting removes it from the keyring.
func TestRealKeyringHoldsTheSecrets(t *testing.T) {
	startKeyring(t, t.TempDir(), true)
	v, st, dir := openVault(t, Options{})
	ctx := context.Background()
	if v.Backend() != BackendKeyring {
		t.Fatalf("an unlocked gnome-keyring was not used: backend %s", v.Backend())
	}
	if err := v.Set(ctx, "provider/openai", apiKey); err != nil {
		t.Fatal(err)
	}
	if got, ok := secretTool(t, v.user("provider/openai")); !ok || got != apiKey {
		t.Fatalf("secret-tool finds %q, %v in the keyring", got, ok)
	}
	row, _, _ := st.SecretRow(ctx, "provider/openai")
	if row.Backend != BackendKeyring || len(row.Ciphertext) != 0 {
		t.Fatalf("the database row holds more than a marker: %+v", row)
	}
	if got, ok, err := v.Get(ctx, "provider/openai"); err != nil || !ok || got != apiKey {
		t.Fatalf("get: %q %v %v", got, ok, err)
	}
	st.Close()
	noPlainText(t, dir, "0123456789abcdef")

	st2, err := store.Open(ctx, filepath.Join(dir, store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	v2, _ := Open(ctx, dir, st2, Options{})
	if err := v2.Delete(ctx, "provider/openai"); err != nil {
		t.Fatal(err)
	}
	if got, ok := secretTool(t, v2.user("provider/openai")); ok {
		t.Fatalf("deleted, yet the keyring still has %q", got)
	}
}

// TestLockedOrAbsentKeyringUsesTheSealedFile starts with no Secret Service on the bus, then
// with a login keyring that stays locked: both times the vault says "file", seals the value
// into the database, and start-up does not wait past the probe's limit.
func TestLockedOrAbsentKeyringUsesTheSealedFile(t *testing.T) {
	ctx := context.Background()
	check := func(what string) {
		t.Helper()
		st, dir := openStore(t)
		start := time.Now()
		v, err := Open(ctx, dir, st, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d > keyringProbeTimeout+time.Second {
			t.Errorf("%s: start-up waited %v", what, d)
		}
		if v.Backend() != BackendFile {
			t.Fatalf("%s: backend %s", what, v.Backend())
		}
		v.Set(ctx, "k", apiKey)
		row, _, _ := st.SecretRow(ctx, "k")
		if row.Backend != BackendFile || len(row.Ciphertext) == 0 || bytes.Contains(row.Ciphertext, []byte(apiKey)) {
			t.Fatalf("%s: row %+v", what, row)
		}
		if got, _, err := v.Get(ctx, "k"); got != apiKey {
			t.Fatalf("%s: get %q %v", what, got, err)
		}
	}
	check("no keyring")

	// A login keyring with a password, then a daemon that was not given it: locked.
	home := t.TempDir()
	startKeyring(t, home, true).stop()
	if _, err := os.Stat(filepath.Join(home, "data", "keyrings", "login.keyring")); err != nil {
		t.Fatalf("the unlocked daemon made no login keyring: %v", err)
	}
	startKeyring(t, home, false)
	check("locked keyring")
}

// TestMovingBetweenFileAndKeyringLosesNoKey runs one data dir through the changes a desktop
// sees: first no keyring (the key is sealed in the file backend), then an unlocked keyring
// (the key moves into it and leaves the database), then the keyring locked (the key cannot be
// read, and the error says to unlock), then unlocked again (the key is back).
func TestMovingBetweenFileAndKeyringLosesNoKey(t *testing.T) {
	ctx := context.Background()
	st, dir := openStore(t)
	open := func(want string) *Vault {
		t.Helper()
		v, err := Open(ctx, dir, st, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if v.Backend() != want {
			t.Fatalf("backend %s, want %s", v.Backend(), want)
		}
		return v
	}
	v := open(BackendFile)
	if err := v.Set(ctx, "provider/anthropic", apiKey); err != nil {
		t.Fatal(err)
	}

	home := t.TempDir()
	kr := startKeyring(t, home, true)
	v = open(BackendKeyring)
	row, _, _ := st.SecretRow(ctx, "provider/anthropic")
	if row.Backend != BackendKeyring || len(row.Ciphertext) != 0 {
		t.Fatalf("the sealed key did not move into the keyring: %+v", row)
	}
	if got, ok := secretTool(t, v.user("provider/anthropic")); !ok || got != apiKey {
		t.Fatalf("the keyring holds %q, %v", got, ok)
	}
	if got, _, err := v.Get(ctx, "provider/anthropic"); got != apiKey {
		t.Fatalf("after the move: %q %v", got, err)
	}

	kr.stop()
	locked := startKeyring(t, home, false)
	v = open(BackendFile)
	if _, _, err := v.Get(ctx, "provider/anthropic"); err == nil || !strings.Contains(err.Error(), "unlock the keyring") {
		t.Fatalf("with the keyring locked: %v", err)
	}
	// A key entered while the keyring is locked goes to the file and moves later.
	v.Set(ctx, "provider/openai", "sk-second-key")

	locked.stop()
	startKeyring(t, home, true) // the person logs in again
	v = open(BackendKeyring)
	for name, want := range map[string]string{"provider/anthropic": apiKey, "provider/openai": "sk-second-key"} {
		if got, _, err := v.Get(ctx, name); got != want {
			t.Fatalf("%s after unlocking: %q %v", name, got, err)
		}
	}
	if row, _, _ := st.SecretRow(ctx, "provider/openai"); row.Backend != BackendKeyring {
		t.Fatalf("the key entered while locked stayed in the file: %+v", row)
	}
}

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

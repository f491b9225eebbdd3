package secrets

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

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

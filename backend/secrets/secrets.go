// Package secrets keeps API keys and passwords out of plain text: in the OS keyring when one
// answers, else sealed with AES-GCM under a key file (0600) in the data dir. The database
// records only where each secret is and, for the file backend, its ciphertext. When the
// keyring answers again, the sealed secrets move into it.
package secrets

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/zalando/go-keyring"

	"github.com/clusterspace/clusterspace/backend/config"
	"github.com/clusterspace/clusterspace/backend/store"
)

// Backends a secret can live in.
const (
	BackendKeyring = "keyring"
	BackendFile    = "file"
)

// keyringService names ClusterSpace's entries in the OS keyring.
const keyringService = "clusterspace"

// keyFileName holds the AES-256 key for the file backend.
const keyFileName = "secrets.key"

// keyringProbeTimeout bounds the keyring check at start-up: without a session bus the D-Bus
// client can wait a long time before failing, and start-up must not.
const keyringProbeTimeout = 2 * time.Second

// Rows is the persistence the vault needs; the store implements it.
type Rows interface {
	SecretRow(ctx context.Context, name string) (store.SecretRow, bool, error)
	PutSecretRow(ctx context.Context, r store.SecretRow) error
	DeleteSecretRow(ctx context.Context, name string) error
	SecretRows(ctx context.Context) ([]store.SecretRow, error)
}

// Keyring is the OS keyring's interface (go-keyring's functions), replaceable in tests.
type Keyring interface {
	Set(service, user, password string) error
	Get(service, user string) (string, error)
	Delete(service, user string) error
}

type osKeyring struct{}

func (osKeyring) Set(s, u, p string) error        { return keyring.Set(s, u, p) }
func (osKeyring) Get(s, u string) (string, error) { return keyring.Get(s, u) }
func (osKeyring) Delete(s, u string) error        { return keyring.Delete(s, u) }

// Vault stores and reads secrets.
type Vault struct {
	rows    Rows
	keyring Keyring // nil when no keyring answered
	aead    cipher.AEAD
	// scope keeps two installs (two data dirs) from sharing keyring entries.
	scope string
	// masker is told every value stored or read (nil: none).
	masker *Masker
}

// Options adjust Open; the zero value uses the OS keyring.
type Options struct {
	// Keyring replaces the OS keyring; NoKeyring forces the file backend.
	Keyring   Keyring
	NoKeyring bool
	// Masker learns every secret the vault holds (see Masker): those stored now are read
	// once at Open, later ones as they are stored or read. nil: nothing is masked.
	Masker *Masker
}

// Open returns a vault for the data dir. It probes the keyring once; if it does not answer in
// time, every new secret goes to the file backend.
func Open(ctx context.Context, dataDir string, rows Rows, opts Options) (*Vault, error) {
	key, err := loadOrCreateKey(filepath.Join(dataDir, keyFileName))
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	scopeSum := key[:4] // stable per install, reveals nothing useful about the key
	v := &Vault{rows: rows, aead: aead, scope: hex.EncodeToString(scopeSum), masker: opts.Masker}
	if !opts.NoKeyring {
		kr := opts.Keyring
		if kr == nil {
			kr = osKeyring{}
		}
		if probe(kr, v.user("probe")) == nil {
			v.keyring = kr
		}
	}
	if v.keyring != nil {
		if err := v.moveToKeyring(ctx); err != nil {
			return nil, err
		}
	}
	v.teachMasker(ctx)
	return v, nil
}

// teachMasker reads every stored secret once, so the masker knows them before any tool
// runs. One that cannot be read now is learnt when it is next read (Get), which is also
// the first moment anything could hand it on.
func (v *Vault) teachMasker(ctx context.Context) {
	if v.masker == nil {
		return
	}
	rows, err := v.rows.SecretRows(ctx)
	if err != nil {
		return // Best effort: each secret is learnt when it is read.
	}
	for _, r := range rows {
		v.Get(ctx, r.Name) // Best effort, as above; Get tells the masker.
	}
}

// moveToKeyring moves the secrets sealed in the file backend into the keyring, which now
// answers (the app ran before without one, or with it locked). Each is read back from the
// keyring before its sealed copy is dropped, so a keyring that takes the write and loses it
// costs nothing; a secret the keyring refuses stays in the file backend.
func (v *Vault) moveToKeyring(ctx context.Context) error {
	rows, err := v.rows.SecretRows(ctx)
	if err != nil {
		return fmt.Errorf("list the stored secrets: %w", err)
	}
	for _, r := range rows {
		if r.Backend != BackendFile {
			continue
		}
		plain, err := v.open(r)
		if err != nil {
			continue // it cannot be read here either: Get says what to do
		}
		if v.keyring.Set(keyringService, v.user(r.Name), plain) != nil {
			continue
		}
		if got, err := v.keyring.Get(keyringService, v.user(r.Name)); err != nil || got != plain {
			continue
		}
		if err := v.rows.PutSecretRow(ctx, store.SecretRow{Name: r.Name, Backend: BackendKeyring}); err != nil {
			return fmt.Errorf("record secret %q as moved to the keyring: %w", r.Name, err)
		}
	}
	return nil
}

// probe writes, reads and deletes a test entry, giving up after keyringProbeTimeout.
func probe(kr Keyring, user string) error {
	done := make(chan error, 1)
	go func() {
		err := kr.Set(keyringService, user, "ok")
		if err == nil {
			var got string
			got, err = kr.Get(keyringService, user)
			if err == nil && got != "ok" {
				err = errors.New("keyring returned a different value")
			}
			kr.Delete(keyringService, user) // Best effort: a leftover probe entry is harmless.
		}
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(keyringProbeTimeout):
		return errors.New("keyring did not answer")
	}
}

func (v *Vault) user(name string) string { return v.scope + "/" + name }

// Backend says where new secrets go: "keyring" or "file".
func (v *Vault) Backend() string {
	if v.keyring != nil {
		return BackendKeyring
	}
	return BackendFile
}

// Set stores a secret under name.
func (v *Vault) Set(ctx context.Context, name, value string) error {
	// Masked from now on, even if storing fails: the value exists in this process either way.
	v.masker.Hold(value, kindOf(name))
	if v.keyring != nil {
		if err := v.keyring.Set(keyringService, v.user(name), value); err == nil {
			return v.rows.PutSecretRow(ctx, store.SecretRow{Name: name, Backend: BackendKeyring})
		}
		// The keyring stopped answering since start-up: the file backend still keeps it sealed.
	}
	nonce := make([]byte, v.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return err
	}
	sealed := v.aead.Seal(nonce, nonce, []byte(value), []byte(name))
	return v.rows.PutSecretRow(ctx, store.SecretRow{Name: name, Backend: BackendFile, Ciphertext: sealed})
}

// Get returns the secret stored under name, and whether there is one.
func (v *Vault) Get(ctx context.Context, name string) (string, bool, error) {
	row, ok, err := v.rows.SecretRow(ctx, name)
	if err != nil || !ok {
		return "", false, err
	}
	switch row.Backend {
	case BackendKeyring:
		kr := v.keyring
		if kr == nil {
			kr = osKeyring{}
		}
		val, err := kr.Get(keyringService, v.user(name))
		if err != nil {
			return "", false, fmt.Errorf("secret %q is in the OS keyring, which did not answer (%v): unlock the keyring, or enter the secret again", name, err)
		}
		v.masker.Hold(val, kindOf(name))
		return val, true, nil
	case BackendFile:
		plain, err := v.open(row)
		if err != nil {
			return "", false, err
		}
		v.masker.Hold(plain, kindOf(name))
		return plain, true, nil
	default:
		return "", false, fmt.Errorf("secret %q has unknown backend %q", name, row.Backend)
	}
}

// open decrypts a file-backend secret.
func (v *Vault) open(row store.SecretRow) (string, error) {
	n := v.aead.NonceSize()
	if len(row.Ciphertext) < n {
		return "", fmt.Errorf("secret %q is damaged: enter it again", row.Name)
	}
	plain, err := v.aead.Open(nil, row.Ciphertext[:n], row.Ciphertext[n:], []byte(row.Name))
	if err != nil {
		return "", fmt.Errorf("secret %q cannot be decrypted with %s (was the key file replaced?): enter it again", row.Name, keyFileName)
	}
	return string(plain), nil
}

// Delete forgets a secret.
func (v *Vault) Delete(ctx context.Context, name string) error {
	row, ok, err := v.rows.SecretRow(ctx, name)
	if err != nil || !ok {
		return err
	}
	if row.Backend == BackendKeyring && v.keyring != nil {
		v.keyring.Delete(keyringService, v.user(name)) // Best effort: the row goes either way.
	}
	// The masker keeps the value: it may still sit in a page or a terminal (see Masker).
	return v.rows.DeleteSecretRow(ctx, name)
}

func loadOrCreateKey(path string) ([]byte, error) {
	key, err := config.LoadOrCreateKeyFile(path, 32)
	if errors.Is(err, config.ErrDamagedKeyFile) {
		return nil, fmt.Errorf("secrets key %q is damaged: restore it from a backup; deleting it makes every stored secret unreadable", path)
	}
	return key, err
}
